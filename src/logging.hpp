// Rank-0 output: the start-up table and the per-step line.
//
// Only rank 0 prints; every line goes to stdout and is flushed, so a batch
// system's log shows progress as it happens. Step lines are grep-able:
//   step 12/500 | loss 2.8412 | lr 3.00e-04 | norm 0.91 | 45.1 ms | 18140 tok/s | 31.2 GFLOP/s | xnode 1.20
//   MB
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace zeropp {

// printf to stdout on rank 0 only.
void log0(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// A two-column table, one "key : value" row per entry.
void log_table(const std::string& title, const std::vector<std::pair<std::string, std::string>>& rows);

struct StepLine {
  int64_t step, steps;
  double loss, lr, norm, ms, tokens_per_s, gflops, xnode_mb;
};
std::string format_step(const StepLine& s);

// "12.3 MiB" style byte counts.
std::string human_bytes(double bytes);

}  // namespace zeropp
