#include "src/logging.hpp"

#include <cstdarg>
#include <cstdio>

#include "src/errors.hpp"

namespace zeropp {

void log0(const char* fmt, ...) {
  if (world_rank() > 0) return;
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stdout, fmt, ap);
  va_end(ap);
  std::fflush(stdout);
}

void log_table(const std::string& title, const std::vector<std::pair<std::string, std::string>>& rows) {
  size_t w = 0;
  for (const auto& r : rows) w = std::max(w, r.first.size());
  log0("%s\n", title.c_str());
  for (const auto& r : rows) log0("  %-*s : %s\n", int(w), r.first.c_str(), r.second.c_str());
}

std::string format_step(const StepLine& s) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "step %lld/%lld | loss %.4f | lr %.2e | norm %.3f | %.1f ms | %.0f tok/s | %.1f GFLOP/s | "
                "xnode %.2f MB",
                (long long)s.step, (long long)s.steps, s.loss, s.lr, s.norm, s.ms, s.tokens_per_s, s.gflops,
                s.xnode_mb);
  return buf;
}

std::string human_bytes(double bytes) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (bytes >= 1024 && i < 4) {
    bytes /= 1024;
    ++i;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, i == 0 ? "%.0f %s" : "%.2f %s", bytes, unit[i]);
  return buf;
}

}  // namespace zeropp
