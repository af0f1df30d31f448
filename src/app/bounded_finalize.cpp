#include "src/app/bounded_finalize.hpp"

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "src/base/errors.hpp"

namespace zeropp {

int bounded_finalize(int status, double timeout_s) {
  ZCHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  const int rank = world_rank();
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  // The watchdog calls no MPI: it only ends the process (FUNNELED threading).
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(m);
    if (cv.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] { return done; })) return;
    if (rank == 0)
      std::fprintf(stderr,
                   "zeropp: MPI_Finalize did not return within %.0f s after every rank finished; "
                   "exiting with status %d\n",
                   timeout_s, status);
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(status);
  });
  const int finalize_line = __LINE__ + 1;  // the line reported should it fail
  const int rc = MPI_Finalize();
  {
    std::lock_guard<std::mutex> lock(m);
    done = true;
  }
  cv.notify_one();
  watchdog.join();
  if (rc == MPI_SUCCESS) return status;
  // After MPI_Finalize neither MPI_Abort nor MPI_Error_string may be called: the code is all there is.
  std::fprintf(stderr, "zeropp: rank %d: MPI_Finalize() failed at %s:%d: MPI error code %d\n", rank, __FILE__,
               finalize_line, rc);
  return status == kExitOk ? kExitError : status;
}

}  // namespace zeropp
