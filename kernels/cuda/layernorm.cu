// LayerNorm on the GPU (kernels/layernorm.hpp is the contract).
//
// Forward: one warp per row; the lanes stride over the C channels, the row sum
// and then the centred sum of squares are reduced over the warp (two passes, as
// on the host, for accuracy), and every lane writes its channels. The sums are
// tree-ordered, so mean, rstd and out agree with the host's sequential sums to
// a few ulp (relative 1e-5 on out for C = 768), not bit for bit.
//
// Backward: dinp by one warp per row (the two row means reduced over the warp,
// the same tolerance); dweight and dbias by one thread per column walking the
// rows in order, which is the host's order: bit for bit the host's, and
// deterministic without atomics (only C threads: fine at the model's C and N,
// a two-level column reduction is the faster equivalent).
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

namespace {
constexpr float kEps = float(1e-5);

__global__ void __launch_bounds__(detail::kThreads)
    layernorm_forward_kernel(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                             const float* bias, int N, int C) {
  const int64_t n = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x & 31;
  if (n >= N) return;  // a whole warp leaves together, so the shuffles stay full-warp
  const float* x = inp + n * C;
  float sum = 0.0f;
  for (int c = lane; c < C; c += 32) sum += x[c];
  const float m = detail::warp_sum(sum) / C;
  float ss = 0.0f;
  for (int c = lane; c < C; c += 32) ss += (x[c] - m) * (x[c] - m);
  const float s = 1.0f / sqrtf(detail::warp_sum(ss) / C + kEps);
  float* o = out + n * C;
  for (int c = lane; c < C; c += 32) o[c] = (x[c] - m) * s * weight[c] + bias[c];
  if (lane == 0) {
    mean[n] = m;
    rstd[n] = s;
  }
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
  detail::for_each_index(C, stream, [=] __device__(int64_t c) {
    float dw = dweight[c], db = dbias[c];
    for (int64_t n = 0; n < N; ++n) {
      const float dy = dout[n * C + c];
      dw += dy * (inp[n * C + c] - mean[n]) * rstd[n];
      db += dy;
    }
    dweight[c] = dw;
    dbias[c] = db;
  });
}

}  // namespace zeropp::cuda
