// A time limit on a blocking region that no watchdog sees into: MPI_Finalize,
// and a checkpoint's parallel HDF5 I/O and agreements (a rank or node lost
// inside a collective write leaves the others in MPI progress for good; the
// communicator's watchdog covers only its own collectives).
//
// A thread waits for the region to end; past the limit it prints the given
// line (if any), flushes, and ends the process with `status`:
//  - kExit: _exit, no MPI (the only way once MPI_Finalize has begun);
//  - kAbort: MPI_Abort from this thread, as the communicator's watchdog does
//    from the main one. The process asked for MPI_THREAD_FUNNELED, under
//    which the standard does not promise this; MPICH and Open MPI only tell
//    the launcher and exit. It is needed: when a rank merely exits, hydra's
//    mpiexec waits for the proxy of a node it can no longer reach, for good,
//    while an abort ends the job at once.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace zeropp {

class Deadline {
 public:
  enum class End { kExit, kAbort };
  // seconds <= 0: no limit (no thread).
  Deadline(double seconds, std::string line, int status, End end);
  ~Deadline();  // the region ended in time: stops the thread
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace zeropp
