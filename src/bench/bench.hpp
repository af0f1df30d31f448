// `zeropp bench step`: steady-state step time of a deck next to the GEMM
// library's throughput on the model's own GEMM shapes, measured in the same
// run, so the ratio (model GFLOP/s / GEMM GFLOP/s) is meaningful on a noisy
// shared machine: the GEMM mix (src/bench/gemm_mix.hpp) is timed right after
// every timed step and each step divided by its own (src/bench/paired_ratio.hpp).
#pragma once

#include "src/bench/gemm_mix.hpp"  // GemmShape, model_gemm_shapes (also for src/bench/gemm_bench.cpp)
#include "src/config/config.hpp"

namespace zeropp {

int run_bench_step(const Config& cfg, int steps);

// `zeropp bench quant`: after `steps` training steps of the deck, the error
// of blockwise int8/int4 quantization (relative L2 and relative max) of the
// model's real weights and gradients, for several block sizes and for one
// scale per tensor: the measurement behind zero.weight_block and
// zero.gradient_block.
int run_bench_quant(const Config& cfg, int steps);

}  // namespace zeropp
