#include "src/run/bounded_finalize.hpp"

#include <mpi.h>

#include <csignal>
#include <cstdio>

#include "src/base/deadline.hpp"
#include "src/base/errors.hpp"

namespace zeropp {

int bounded_finalize(int status, double timeout_s) {
  // The exit status is decided. When the first rank exits non-zero (3: stopped after a checkpoint),
  // srun --kill-on-bad-exit sends SIGTERM to the others; a late SIGUSR1 (the time-limit warning)
  // may come too. Either would turn a rank still finishing MPI_Finalize into death by signal, and
  // the job's status from 3 into 143, so the job script would not requeue.
  std::signal(SIGTERM, SIG_IGN);
  std::signal(SIGUSR1, SIG_IGN);
  ZCHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  const int rank = world_rank();
  int rc = MPI_SUCCESS, finalize_line = 0;
  {
    char line[160] = "";
    if (rank == 0)
      std::snprintf(line, sizeof line,
                    "zeropp: MPI_Finalize did not return within %.0f s after every rank finished; "
                    "exiting with status %d",
                    timeout_s, status);
    const Deadline deadline(timeout_s, line, status, Deadline::End::kExit);
    finalize_line = __LINE__ + 1;  // the line reported should it fail
    rc = MPI_Finalize();
  }
  if (rc == MPI_SUCCESS) return status;
  // After MPI_Finalize neither MPI_Abort nor MPI_Error_string may be called: the code is all there is.
  std::fprintf(stderr, "zeropp: rank %d: MPI_Finalize() failed at %s:%d: MPI error code %d\n", rank, __FILE__,
               finalize_line, rc);
  return status == kExitOk ? kExitError : status;
}

}  // namespace zeropp
