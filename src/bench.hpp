// `zeropp bench step`: steady-state step time of a deck next to the GEMM
// library's throughput on the model's own GEMM shapes, measured in the same
// run, so the ratio (model GFLOP/s / GEMM GFLOP/s) is meaningful on a noisy
// shared machine.
#pragma once

#include "src/config.hpp"

namespace zeropp {

int run_bench_step(const Config& cfg, int steps);

}  // namespace zeropp
