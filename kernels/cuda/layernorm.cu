// LayerNorm on the GPU (kernels/ops/layernorm.hpp is the contract).
//
// Forward: one warp per row (layernorm_row.cuh, which states the agreement:
// relative 1e-5 on out for C = 768, not bit for bit).
//
// Backward: dinp by one warp per row (the two row means reduced over the warp,
// the same tolerance); dweight and dbias by the two-level column sums of
// column_sum.cuh (deterministic; its tolerance against the host's row order),
// each term dy * ((x - mean) * rstd) in the host's association.
#include "kernels/cuda/column_sum.cuh"
#include "kernels/cuda/layernorm_row.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

namespace {

__global__ void __launch_bounds__(detail::kThreads)
    layernorm_forward_kernel(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                             const float* bias, int N, int C) {
  const int64_t n = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (n >= N) return;  // a whole warp leaves together, so the shuffles stay full-warp
  detail::layernorm_row_warp(out + n * C, mean + n, rstd + n, inp + n * C, weight, bias, C);
}

__global__ void __launch_bounds__(detail::kThreads)
    layernorm_backward_dinp_kernel(float* dinp, const float* dout, const float* inp, const float* weight,
                                   const float* mean, const float* rstd, int N, int C) {
  const int64_t n = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x & 31;
  if (n >= N) return;
  const float* x = inp + n * C;
  const float* dy = dout + n * C;
  const float m = mean[n], s = rstd[n];
  float dnorm_mean = 0.0f, dnorm_norm_mean = 0.0f;
  for (int c = lane; c < C; c += 32) {
    const float dnorm = weight[c] * dy[c];
    dnorm_mean += dnorm;
    dnorm_norm_mean += dnorm * (x[c] - m) * s;
  }
  dnorm_mean = detail::warp_sum(dnorm_mean) / C;
  dnorm_norm_mean = detail::warp_sum(dnorm_norm_mean) / C;
  float* dx = dinp + n * C;
  for (int c = lane; c < C; c += 32)
    dx[c] += s * (weight[c] * dy[c] - dnorm_mean - (x[c] - m) * s * dnorm_norm_mean);
}
}  // namespace

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                       const float* bias, int N, int C, cudaStream_t stream) {
  if (N <= 0) return;
  layernorm_forward_kernel<<<detail::blocks_for_warps(N), detail::kThreads, 0, stream>>>(out, mean, rstd, inp,
                                                                                         weight, bias, N, C);
  ZCHECK_CUDA(cudaGetLastError());
}

void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                        const float* weight, const float* mean, const float* rstd, int N, int C,
                        cudaStream_t stream) {
  if (N <= 0) return;
  layernorm_backward_dinp_kernel<<<detail::blocks_for_warps(N), detail::kThreads, 0, stream>>>(
      dinp, dout, inp, weight, mean, rstd, N, C);
  ZCHECK_CUDA(cudaGetLastError());
  const auto term = [=] __device__(int64_t n, int c, float* v) {
    const float dy = dout[n * C + c];
    v[0] = dy * ((inp[n * C + c] - mean[n]) * rstd[n]);
    v[1] = dy;
  };
  detail::column_sums<2>(N, C, term, {{dweight, dbias}}, stream);
}

}  // namespace zeropp::cuda
