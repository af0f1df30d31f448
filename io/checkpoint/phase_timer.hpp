// Phase times of a checkpoint save or load, printed by rank 0 when
// ZEROPP_CKPT_TIMING is set. No MPI call: a checkpoint's background thread
// times its phases too.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace zeropp::ckpt {

class PhaseTimer {
 public:
  PhaseTimer(const char* what, int rank) : what_(what), on_(rank == 0 && std::getenv("ZEROPP_CKPT_TIMING")) {
    t0_ = last_ = now();
  }
  void mark(const char* phase) {
    if (!on_) return;
    const double t = now();
    char buf[96];
    std::snprintf(buf, sizeof buf, " %s %.3f s", phase, t - last_);
    text_ += buf;
    last_ = t;
  }
  ~PhaseTimer() {
    if (on_) std::fprintf(stderr, "zeropp: %s:%s; total %.3f s\n", what_, text_.c_str(), now() - t0_);
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  const char* what_;
  bool on_;
  double t0_ = 0, last_ = 0;
  std::string text_;
};

}  // namespace zeropp::ckpt
