#include "src/base/logging.hpp"

#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <exception>

#include "src/base/errors.hpp"

namespace zeropp {

namespace {
std::FILE* g_log_file = nullptr;  // LogFile's, rank 0
// What log0 printed while a LogFile existed but was not open yet (the start-up
// table and resume lines come before the run folder may be written).
std::string* g_log_pending = nullptr;
// A LogFile destroyed by an exception leaves its file open for print_error.
bool g_log_orphaned = false;
}  // namespace

void log0(const char* fmt, ...) {
  if (world_rank() > 0) return;
  va_list ap;
  va_start(ap, fmt);
  if (g_log_file) {
    va_list copy;
    va_copy(copy, ap);
    std::vfprintf(g_log_file, fmt, copy);
    va_end(copy);
    std::fflush(g_log_file);
  } else if (g_log_pending) {
    va_list copy;
    va_copy(copy, ap);
    const int n = std::vsnprintf(nullptr, 0, fmt, copy);
    va_end(copy);
    if (n > 0) {
      const size_t at = g_log_pending->size();
      g_log_pending->resize(at + size_t(n) + 1);
      va_copy(copy, ap);
      std::vsnprintf(&(*g_log_pending)[at], size_t(n) + 1, fmt, copy);
      va_end(copy);
      g_log_pending->resize(at + size_t(n));
    }
  }
  std::vfprintf(stdout, fmt, ap);
  va_end(ap);
  std::fflush(stdout);
}

LogFile::LogFile() {
  if (world_rank() == 0 && !g_log_pending) g_log_pending = &pending_;
}

void LogFile::open(const std::string& path, bool append) {
  if (world_rank() > 0) return;
  if (g_log_file) throw Error("log file " + path + ": another log file is open");
  g_log_file = std::fopen(path.c_str(), append ? "a" : "w");
  if (!g_log_file) throw Error("cannot open log file " + path + ": " + std::strerror(errno));
  std::fputs(pending_.c_str(), g_log_file);
  std::fflush(g_log_file);
  pending_.clear();
  g_log_pending = nullptr;
}

LogFile::~LogFile() {
  if (g_log_pending == &pending_) g_log_pending = nullptr;
  if (g_log_file && std::uncaught_exceptions() > 0) {
    g_log_orphaned = true;  // the error's line is still to come
    return;
  }
  if (g_log_file) std::fclose(g_log_file);
  g_log_file = nullptr;
}

void print_error(const std::string& line) {
  std::fprintf(stderr, "zeropp: error: %s\n", line.c_str());
  if (!g_log_file) return;
  std::fprintf(g_log_file, "zeropp: error: %s\n", line.c_str());
  std::fflush(g_log_file);
  if (g_log_orphaned) {
    std::fclose(g_log_file);
    g_log_file = nullptr;
    g_log_orphaned = false;
  }
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
                "xnode %.2f MB | hidden %.0f%% | elapsed %s | ETA %s",
                (long long)s.step, (long long)s.steps, s.loss, s.lr, s.norm, s.ms, s.tokens_per_s, s.gflops,
                s.xnode_mb, s.hidden * 100, format_duration(s.elapsed_s).c_str(),
                format_duration(s.eta_s).c_str());
  return buf;
}

double eta_seconds(double seconds, int64_t done, int64_t left) {
  return done > 0 ? seconds / double(done) * double(left) : 0.0;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto total = static_cast<long long>(std::llround(seconds));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", total / 3600, total / 60 % 60, total % 60);
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
