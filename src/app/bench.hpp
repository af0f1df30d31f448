// `zeropp bench step`: steady-state step time of a deck next to the GEMM
// library's throughput on the model's own GEMM shapes, measured in the same
// run, so the ratio (model GFLOP/s / GEMM GFLOP/s) is meaningful on a noisy
// shared machine.
#pragma once

#include <vector>

#include "kernels/gemm.hpp"
#include "src/config/config.hpp"

namespace zeropp {

// One GEMM shape of the model and how often a training step runs it.
struct GemmShape {
  Trans ta, tb;
  int M, N, K;
  int per_step;
};

// Every GEMM of one micro-batch's forward and backward through the linear
// layers and the tied LM head (matmul.cpp's calls), BT tokens.
std::vector<GemmShape> model_gemm_shapes(const ModelConfig& m, int BT);

int run_bench_step(const Config& cfg, int steps);

// `zeropp bench quant`: after `steps` training steps of the deck, the error
// of blockwise int8/int4 quantization (relative L2 and relative max) of the
// model's real weights and gradients, for several block sizes and for one
// scale per tensor: the measurement behind zero.weight_block and
// zero.gradient_block.
int run_bench_quant(const Config& cfg, int steps);

}  // namespace zeropp
