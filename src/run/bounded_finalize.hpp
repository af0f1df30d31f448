// MPI_Finalize with a time limit. Over UCX 1.13's tcp transport (ranks on
// different hosts) MPI_Finalize can spin in ucp_worker_progress forever after
// the run's work is done, holding a batch allocation to its wall-time limit.
// Every rank first meets the others in a barrier (so all of them have flushed
// their metrics and checkpoints); if MPI_Finalize then does not return within
// timeout_s, the process ends with `status` and rank 0 says so in one line.
// A failing MPI_Finalize is reported in one line (file:line, rank).
#pragma once

namespace zeropp {

// Returns the exit status once MPI_Finalize has: `status`, or kExitError in
// its place when MPI_Finalize failed; never returns if the time limit ends the process.
int bounded_finalize(int status, double timeout_s);

}  // namespace zeropp
