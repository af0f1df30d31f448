// Attention's causal mask + softmax, fused, on the GPU (kernels/ops/causal_softmax.hpp
// is the contract).
//
// Forward: one warp per row; the lanes stride over the visible columns t2 <=
// last (last = pos + r % Tn; training has pos = 0 and rows of Tn), take the
// row maximum and the sum of expf(pre - max) over the warp, and write
// att = expf(pre - max) / sum there and 0 above the diagonal. Each lane reads
// a column before it writes it, so att may be pre (attention_decode.cu).
// Backward: one warp per row forms dot = sum(att * datt) over the visible
// columns and writes dpre = scale * att * (datt - dot), 0 above the diagonal.
// Agreement with the host twin: CUDA's expf (2 ulp) against the host's
// polynomial exponential (1.4 ulp, kernels/ops/fast_exp.hpp), and warp-tree sums
// against the host's eight lanes: att within relative 1e-5 (absolute 1e-7 for
// the smallest weights), dpre within relative 1e-5, absolute 1e-6; the masked
// entries exactly 0 in both.
#include "kernels/cuda/causal_softmax.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

namespace {

__global__ void __launch_bounds__(detail::kThreads)
    causal_softmax_kernel(float* att, const float* pre, int64_t rows, int Tn, int len, int pos) {
  const int64_t row = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;  // whole warps leave together
  const int last = pos + int(row % Tn);
  const float* p = pre + row * len;
  float* a = att + row * len;
  float maxv = -INFINITY;
  for (int t2 = lane; t2 <= last; t2 += 32) maxv = fmaxf(maxv, p[t2]);
  maxv = detail::warp_max(maxv);
  float sum = 0.0f;
  for (int t2 = lane; t2 <= last; t2 += 32) sum += expf(p[t2] - maxv);
  const float inv = 1.0f / detail::warp_sum(sum);
  for (int t2 = lane; t2 < len; t2 += 32) a[t2] = t2 <= last ? expf(p[t2] - maxv) * inv : 0.0f;
}

__global__ void __launch_bounds__(detail::kThreads)
    causal_softmax_backward_kernel(float* dpre, const float* att, const float* datt, float scale,
                                   int64_t rows, int Tn) {
  const int64_t row = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const int t = int(row % Tn);
  const float* a = att + row * Tn;
  const float* da = datt + row * Tn;
  float* dp = dpre + row * Tn;
  float dot = 0.0f;
  for (int t2 = lane; t2 <= t; t2 += 32) dot += a[t2] * da[t2];
  dot = detail::warp_sum(dot);
  for (int t2 = lane; t2 < Tn; t2 += 32) dp[t2] = t2 <= t ? scale * a[t2] * (da[t2] - dot) : 0.0f;
}

}  // namespace

namespace detail {
void causal_softmax_rows(float* att, const float* pre, int64_t rows, int Tn, int len, int pos,
                         cudaStream_t stream) {
  if (rows <= 0) return;
  causal_softmax_kernel<<<blocks_for_warps(rows), kThreads, 0, stream>>>(att, pre, rows, Tn, len, pos);
  ZCHECK_CUDA(cudaGetLastError());
}
}  // namespace detail

void causal_softmax_forward(float* att, const float* pre, int64_t rows, int Tn, cudaStream_t stream) {
  detail::causal_softmax_rows(att, pre, rows, Tn, Tn, 0, stream);
}

void causal_softmax_backward(float* dpre, const float* att, const float* datt, int64_t rows, int Tn,
                             float scale, cudaStream_t stream) {
  if (rows <= 0) return;
  causal_softmax_backward_kernel<<<detail::blocks_for_warps(rows), detail::kThreads, 0, stream>>>(
      dpre, att, datt, scale, rows, Tn);
  ZCHECK_CUDA(cudaGetLastError());
}

}  // namespace zeropp::cuda
