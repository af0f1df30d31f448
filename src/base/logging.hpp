// Rank-0 output: the start-up table and the per-step line.
//
// Only rank 0 prints; every line goes to stdout and is flushed, so a batch
// system's log shows progress as it happens, and, while a LogFile is open, to
// train.log in the run folder too. Step lines are grep-able (one line):
//   step 12/500 | loss 2.8412 | lr 3.00e-04 | norm 0.910 | 45.1 ms | 18140 tok/s | 31.2 GFLOP/s |
//   xnode 7.58 MB | elapsed 0:00:03 | ETA 0:00:22
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace zeropp {

// printf to stdout on rank 0 only (and to the open LogFile).
void log0(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// While open, log0 also writes to this file (rank 0 only; others ignore it).
// What log0 prints between construction and open() is kept and written first,
// so the file starts with the start-up table although the run folder is only
// written once every check has passed.
class LogFile {
 public:
  LogFile();
  // Opens `path` for appending (append) or anew; throws Error naming it.
  void open(const std::string& path, bool append);
  ~LogFile();
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

 private:
  std::string pending_;
};

// "zeropp: error: <line>" on stderr, and into the open LogFile (also one that
// an exception is unwinding: its destructor leaves the file open for this line).
void print_error(const std::string& line);

// A two-column table, one "key : value" row per entry.
void log_table(const std::string& title, const std::vector<std::pair<std::string, std::string>>& rows);

struct StepLine {
  int64_t step, steps;
  double loss, lr, norm, ms, tokens_per_s, gflops, xnode_mb;
  double hidden;            // rank 0's fraction of collective time hidden under compute
  double elapsed_s, eta_s;  // since start-up; until the last step
};
std::string format_step(const StepLine& s);

// Seconds the `left` remaining steps take at the pace of `done` steps that
// took `seconds` (validation and checkpoints included); 0 when none are done.
double eta_seconds(double seconds, int64_t done, int64_t left);

// "H:MM:SS" (hours unbounded; negative and non-finite values print "?").
std::string format_duration(double seconds);

// "12.3 MiB" style byte counts.
std::string human_bytes(double bytes);

}  // namespace zeropp
