// What `zeropp ckpt info|verify ARG` opens. ARG may be
//   a checkpoint file            -> itself
//   a checkpoint folder          -> the checkpoint its `latest` names, else its newest step_*.h5
//   a run folder                 -> the same in its checkpoints/ folder (the default
//                                   checkpoint.dir; a run with another one: give that folder)
//   a `latest` file              -> the same in the folder it lies in
// One process, no MPI. Throws Error naming ARG when it leads to no checkpoint.
#pragma once

#include <string>

namespace zeropp {

std::string locate_checkpoint(const std::string& arg);

}  // namespace zeropp
