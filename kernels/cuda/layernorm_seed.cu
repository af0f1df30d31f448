// LayerNorm that also writes inp + seed_bias, on the GPU
// (kernels/ops/layernorm_seed.hpp is the contract): one warp per row; the warp
// normalises the row (layernorm_row.cuh), then each lane writes seed for its
// channels. seed agrees with the host bit for bit (one add); out, mean and rstd
// within layernorm_row.cuh's tolerance (relative 1e-5: warp-tree sums against
// the host's sequential ones).
#include "kernels/cuda/layernorm_row.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

namespace {
__global__ void __launch_bounds__(detail::kThreads)
    layernorm_seed_kernel(float* out, float* mean, float* rstd, float* seed, const float* inp,
                          const float* weight, const float* bias, const float* seed_bias, int N, int C) {
  const int64_t n = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (n >= N) return;  // whole warps leave together
  const float* x = inp + n * C;
  detail::layernorm_row_warp(out + n * C, mean + n, rstd + n, x, weight, bias, C);
  for (int c = threadIdx.x & 31; c < C; c += 32) seed[n * C + c] = x[c] + seed_bias[c];
}
}  // namespace

void layernorm_seed_forward(float* out, float* mean, float* rstd, float* seed, const float* inp,
                            const float* weight, const float* bias, const float* seed_bias, int N, int C,
                            cudaStream_t stream) {
  if (N <= 0) return;
  layernorm_seed_kernel<<<detail::blocks_for_warps(N), detail::kThreads, 0, stream>>>(
      out, mean, rstd, seed, inp, weight, bias, seed_bias, N, C);
  ZCHECK_CUDA(cudaGetLastError());
}

}  // namespace zeropp::cuda
