// The GEMM library's rate on one training step's GEMM shapes (`bench step`'s
// reference): operands allocated and filled once, so that timing the mix
// again after every step measures only the GEMMs.
#pragma once

#include <vector>

#include "kernels/gemm/gemm.hpp"
#include "kernels/runtime/device_buffer.hpp"
#include "src/base/precision.hpp"
#include "src/config/config.hpp"

namespace zeropp {

// One GEMM shape of the model, how often a training step runs it, and the
// beta it runs with (1 where the step accumulates onto C: OpenBLAS then skips
// its own clearing pass over C, so the reference must run the same beta).
struct GemmShape {
  Trans ta, tb;
  int M, N, K;
  int per_step;
  float beta;
};

// Every GEMM of one micro-batch's forward and backward through GPT-2's linear
// layers and the tied LM head (matmul.cpp's calls, with their betas), BT tokens.
std::vector<GemmShape> model_gemm_shapes(const ModelConfig& m, int BT);

class GemmMix {
 public:
  // Engine memory: on the GPU (cuBLAS) while a device context is installed.
  GemmMix(std::vector<GemmShape> shapes, Precision prec);
  // FLOPs of one step's GEMMs.
  double flops() const;
  // Seconds of one step's GEMMs: each shape runs once untimed (caches, first
  // touch of the output), then `timed` times; the best of those counts,
  // per_step times.
  double seconds(int timed) const;

 private:
  std::vector<GemmShape> shapes_;
  Precision prec_;
  Buffer<float> operands_;  // A then B of any one shape, random in [-1, 1)
  Buffer<float> out_;       // C (accumulated into where beta = 1)
};

}  // namespace zeropp
