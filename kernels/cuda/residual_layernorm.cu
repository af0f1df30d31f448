// A residual add fused with the LayerNorm after it, on the GPU
// (kernels/residual_layernorm.hpp is the contract): one warp per row; each
// lane writes res = a + b (or a + (b + b_bias)) for its channels, then the warp normalises the row
// it just wrote (layernorm_row.cuh, whose lanes read only their own channels,
// so no synchronisation is needed in between). res agrees with the host bit for bit (one
// add); out, mean and rstd within layernorm_row.cuh's tolerance (relative
// 1e-5: warp-tree sums against the host's sequential ones).
#include "kernels/cuda/layernorm_row.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

namespace {
__global__ void __launch_bounds__(detail::kThreads)
    residual_layernorm_kernel(float* res, float* out, float* mean, float* rstd, const float* a,
                              const float* b, const float* b_bias, const float* weight, const float* bias,
                              int N, int C) {
  const int64_t n = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (n >= N) return;  // whole warps leave together
  float* r = res + n * C;
  for (int c = threadIdx.x & 31; c < C; c += 32)
    r[c] = b_bias ? a[n * C + c] + (b[n * C + c] + b_bias[c]) : a[n * C + c] + b[n * C + c];
  detail::layernorm_row_warp(out + n * C, mean + n, rstd + n, r, weight, bias, C);
}
}  // namespace

void residual_layernorm_forward(float* res, float* out, float* mean, float* rstd, const float* a,
                                const float* b, const float* b_bias, const float* weight, const float* bias,
                                int N, int C, cudaStream_t stream) {
  if (N <= 0) return;
  residual_layernorm_kernel<<<detail::blocks_for_warps(N), detail::kThreads, 0, stream>>>(
      res, out, mean, rstd, a, b, b_bias, weight, bias, N, C);
  ZCHECK_CUDA(cudaGetLastError());
}

}  // namespace zeropp::cuda
