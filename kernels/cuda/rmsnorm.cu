// RMSNorm on the GPU (kernels/ops/rmsnorm.hpp is the contract), laid out as
// kernels/cuda/layernorm.cu: one warp per row for the forward and for dinp
// (warp-reduced sums: within a few ulp of the host's sequential sums, relative
// 1e-5), and dweight by the two-level column sums of column_sum.cuh
// (deterministic; its tolerance against the host's row order).
#include "kernels/cuda/column_sum.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

namespace {
constexpr float kEps = float(1e-5);

__global__ void __launch_bounds__(detail::kThreads)
    rmsnorm_forward_kernel(float* out, float* rstd, const float* inp, const float* weight, int N, int C) {
  const int64_t n = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x & 31;
  if (n >= N) return;  // whole warps leave together
  const float* x = inp + n * C;
  float ss = 0.0f;
  for (int c = lane; c < C; c += 32) ss += x[c] * x[c];
  const float r = 1.0f / sqrtf(detail::warp_sum(ss) / float(C) + kEps);
  float* o = out + n * C;
  for (int c = lane; c < C; c += 32) o[c] = x[c] * r * weight[c];
  if (lane == 0) rstd[n] = r;
}

__global__ void __launch_bounds__(detail::kThreads)
    rmsnorm_backward_dinp_kernel(float* dinp, const float* dout, const float* inp, const float* weight,
                                 const float* rstd, int N, int C) {
  const int64_t n = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x & 31;
  if (n >= N) return;
  const float* x = inp + n * C;
  const float* dy = dout + n * C;
  const float r = rstd[n];
  float dot = 0.0f;
  for (int c = lane; c < C; c += 32) dot += dy[c] * weight[c] * x[c] * r;
  const float mean_dot = detail::warp_sum(dot) / float(C);
  float* dx = dinp + n * C;
  for (int c = lane; c < C; c += 32) dx[c] += r * (dy[c] * weight[c] - x[c] * r * mean_dot);
}
}  // namespace

void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int N, int C,
                     cudaStream_t stream) {
  if (N <= 0) return;
  rmsnorm_forward_kernel<<<detail::blocks_for_warps(N), detail::kThreads, 0, stream>>>(out, rstd, inp, weight,
                                                                                       N, C);
  ZCHECK_CUDA(cudaGetLastError());
}

void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                      const float* rstd, int N, int C, cudaStream_t stream) {
  if (N <= 0) return;
  rmsnorm_backward_dinp_kernel<<<detail::blocks_for_warps(N), detail::kThreads, 0, stream>>>(
      dinp, dout, inp, weight, rstd, N, C);
  ZCHECK_CUDA(cudaGetLastError());
  const auto term = [=] __device__(int64_t n, int c, float* v) {
    v[0] = dout[n * C + c] * inp[n * C + c] * rstd[n];
  };
  detail::column_sums<1>(N, C, term, {{dweight}}, stream);
}

}  // namespace zeropp::cuda
