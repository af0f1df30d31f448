#include "src/comm/link_emulator.hpp"

#include <algorithm>

namespace zeropp {

LinkEmulator::LinkEmulator(double gbps, double latency_us)
    : gbps_(std::max(gbps, 0.0)), latency_s_(std::max(latency_us, 0.0) * 1e-6) {}

double LinkEmulator::transfer(double t, int64_t bytes) {
  if (off()) return t;
  const double start = std::max(t, free_at_);
  const double serve = latency_s_ + (gbps_ > 0 ? 8.0 * double(bytes) / (gbps_ * 1e9) : 0.0);
  free_at_ = start + serve;
  return free_at_;
}

EmulatedLinks::Clock::time_point EmulatedLinks::arrival(bool inter, int64_t bytes) {
  using Seconds = std::chrono::duration<double>;
  const Clock::time_point now = Clock::now();
  const double end = (inter ? inter_ : intra_).transfer(Seconds(now.time_since_epoch()).count(), bytes);
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(Seconds(end)));
}

EmulatedLinks::Clock::duration EmulatedLinks::inter_time(int64_t inter_bytes) {
  if (inter_bytes == 0) return Clock::duration::zero();
  const Clock::time_point now = Clock::now();
  return std::max(arrival(true, inter_bytes) - now, Clock::duration::zero());
}

}  // namespace zeropp
