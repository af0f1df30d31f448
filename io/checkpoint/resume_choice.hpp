// Which checkpoint `--resume auto` continues from: the newest that verifies.
//
// A checkpoint can be damaged after it was committed (a bad disk block, a
// copy cut short). Rather than refuse to resume, "auto" falls back to the
// next one that passes every checksum and says which ones it skipped.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace zeropp {

struct ResumeChoice {
  std::string path;                  // "" when there is no checkpoint at all
  std::vector<std::string> skipped;  // "step_00000004.h5 (why)", best first; filled on rank 0 only
};

// Collective over comm. For "auto" (the directory `dir`) or a directory: rank 0
// recomputes the checksums of checkpoint_candidates() in order (as `zeropp ckpt
// verify` does) and takes the first that passes; every rank gets its path.
// A file is taken as is (read_checkpoint verifies it). Error (on every rank)
// naming each one when checkpoints exist but none verifies.
ResumeChoice choose_resume_checkpoint(MPI_Comm comm, const std::string& which, const std::string& dir);

}  // namespace zeropp
