#include "src/base/deadline.hpp"

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace zeropp {

Deadline::Deadline(double seconds, std::string line, int status, End end) {
  if (seconds <= 0) return;
  thread_ = std::thread([this, seconds, line = std::move(line), status, end] {
    std::unique_lock<std::mutex> lock(m_);
    if (cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) return;
    if (!line.empty()) std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stdout);
    std::fflush(stderr);
    // Give the launcher's I/O forwarding time to deliver the line before the job is torn down.
    if (!line.empty()) usleep(500000);
    if (end == End::kAbort) MPI_Abort(MPI_COMM_WORLD, status);
    _exit(status);
  });
}

Deadline::~Deadline() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(m_);
    done_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

}  // namespace zeropp
