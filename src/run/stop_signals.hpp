// Stopping a long run cleanly: `zeropp train` and `zeropp rlhf` end at a step
// boundary, after a checkpoint, on a signal or before train.max_runtime.
//
// SIGUSR1 (Slurm's --signal), SIGTERM (PBS at walltime, scancel) and SIGINT
// (Ctrl-C) only set a flag while a StopSignals lives; the ranks agree on it at
// the next step boundary (stop_reason). A second Ctrl-C ends the process at
// once, with a status of its own (dying of SIGINT would make mpiexec exit 2,
// the status of a usage error).
#pragma once

#include <csignal>

#include "src/comm/communicator.hpp"

namespace zeropp {

// Installs the handlers; the previous ones come back on destruction (one
// owner: not copyable).
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;  // one owner restores the old handlers
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_[3] = {};  // SIGUSR1, SIGTERM, SIGINT
};

// At a step boundary, collective over g (one all-reduce): why the run stops
// now, "signal" (on any rank) or "train.max_runtime" (the next two steps of
// last_step_s each would cross max_runtime seconds after `started`, MPI_Wtime;
// 0: no limit), or nullptr to go on.
const char* stop_reason(Communicator& comm, Group& g, double started, double last_step_s, double max_runtime);

}  // namespace zeropp
