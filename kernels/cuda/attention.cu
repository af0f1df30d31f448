// Causal multi-head self-attention on the GPU (kernels/attention.hpp is the
// contract): the host's four GEMMs, as cuBLAS strided-batched calls over the
// NH heads of each batch element (kernels/cuda/gemm_cublas.hpp: fp32, or TF32
// where the handle allows it), with the same operands, strides and scale
// folded into alpha; between them one fused kernel.
//
// Forward, after preatt = scale * q k^T: one warp per (b, h, t) row masks
// t2 > t, takes the row maximum and the sum of exp(preatt - max) over the warp,
// and writes att = exp(...) / sum on t2 <= t and 0 above the diagonal.
// Backward, after datt = dout v^T and dv += att^T dout: one warp per row forms
// dot = sum(att * datt) over the warp and writes dpreatt = scale * att *
// (datt - dot), 0 above the diagonal; then dq += dpreatt k, dk += dpreatt^T q.
// Agreement with the host: cuBLAS sums in another order than OpenBLAS, and
// CUDA's expf differs from glibc's by an ulp: relative 1e-5 of each output's
// magnitude at the model's shapes (fp32 GEMMs), the masked entries exactly 0.
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

namespace {

__global__ void __launch_bounds__(detail::kThreads)
    causal_softmax_kernel(float* att, const float* preatt, int64_t rows, int Tn) {
  const int64_t row = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;  // whole warps leave together
  const int t = int(row % Tn);
  const float* p = preatt + row * Tn;
  float* a = att + row * Tn;
  float maxv = -INFINITY;
  for (int t2 = lane; t2 <= t; t2 += 32) maxv = fmaxf(maxv, p[t2]);
  maxv = detail::warp_max(maxv);
  float sum = 0.0f;
  for (int t2 = lane; t2 <= t; t2 += 32) sum += expf(p[t2] - maxv);
  const float inv = 1.0f / detail::warp_sum(sum);
  for (int t2 = lane; t2 < Tn; t2 += 32) a[t2] = t2 <= t ? expf(p[t2] - maxv) * inv : 0.0f;
}

__global__ void __launch_bounds__(detail::kThreads)
    causal_softmax_backward_kernel(float* dpreatt, const float* att, const float* datt, float scale,
                                   int64_t rows, int Tn) {
  const int64_t row = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const int t = int(row % Tn);
  const float* a = att + row * Tn;
  const float* da = datt + row * Tn;
  float* dp = dpreatt + row * Tn;
  float dot = 0.0f;
  for (int t2 = lane; t2 <= t; t2 += 32) dot += a[t2] * da[t2];
  dot = detail::warp_sum(dot);
  for (int t2 = lane; t2 < Tn; t2 += 32) dp[t2] = t2 <= t ? scale * a[t2] * (da[t2] - dot) : 0.0f;
}

}  // namespace

void attention_forward(Blas& blas, float* out, float* preatt, float* att, const float* qkv, int B, int Tn,
                       int C, int NH) {
  const int hs = C / NH;
  const int64_t C3 = 3 * int64_t(C);
  const int64_t TT = int64_t(Tn) * Tn;
  const float scale = 1.0f / sqrtf(float(hs));
  for (int b = 0; b < B; ++b) {
    const float* q = qkv + b * Tn * C3;
    gemm_strided_batched<float>(blas, Trans::N, Trans::T, Tn, Tn, hs, scale, q, int(C3), hs, q + C, int(C3),
                                hs, 0.0f, preatt + b * NH * TT, Tn, TT, NH);
  }
  const int64_t rows = int64_t(B) * NH * Tn;
  if (rows > 0) {
    causal_softmax_kernel<<<detail::blocks_for_warps(rows), detail::kThreads, 0, blas.stream()>>>(att, preatt,
                                                                                                  rows, Tn);
    ZCHECK_CUDA(cudaGetLastError());
  }
  for (int b = 0; b < B; ++b) {
    const float* v = qkv + b * Tn * C3 + 2 * C;
    gemm_strided_batched<float>(blas, Trans::N, Trans::N, Tn, hs, Tn, 1.0f, att + b * NH * TT, Tn, TT, v,
                                int(C3), hs, 0.0f, out + int64_t(b) * Tn * C, C, hs, NH);
  }
}

void attention_backward(Blas& blas, float* dqkv, float* dpreatt, float* datt, const float* dout,
                        const float* qkv, const float* att, int B, int Tn, int C, int NH) {
  const int hs = C / NH;
  const int64_t C3 = 3 * int64_t(C);
  const int64_t TT = int64_t(Tn) * Tn;
  const float scale = 1.0f / sqrtf(float(hs));
  for (int b = 0; b < B; ++b) {
    const float* dy = dout + int64_t(b) * Tn * C;
    const float* v = qkv + b * Tn * C3 + 2 * C;
    gemm_strided_batched<float>(blas, Trans::N, Trans::T, Tn, Tn, hs, 1.0f, dy, C, hs, v, int(C3), hs, 0.0f,
                                datt + b * NH * TT, Tn, TT, NH);
    gemm_strided_batched<float>(blas, Trans::T, Trans::N, Tn, hs, Tn, 1.0f, att + b * NH * TT, Tn, TT, dy, C,
                                hs, 1.0f, dqkv + b * Tn * C3 + 2 * C, int(C3), hs, NH);
  }
  const int64_t rows = int64_t(B) * NH * Tn;
  if (rows > 0) {
    causal_softmax_backward_kernel<<<detail::blocks_for_warps(rows), detail::kThreads, 0, blas.stream()>>>(
        dpreatt, att, datt, scale, rows, Tn);
    ZCHECK_CUDA(cudaGetLastError());
  }
  for (int b = 0; b < B; ++b) {
    const float* q = qkv + b * Tn * C3;
    float* dq = dqkv + b * Tn * C3;
    const float* dpb = dpreatt + b * NH * TT;
    gemm_strided_batched<float>(blas, Trans::N, Trans::N, Tn, hs, Tn, 1.0f, dpb, Tn, TT, q + C, int(C3), hs,
                                1.0f, dq, int(C3), hs, NH);
    gemm_strided_batched<float>(blas, Trans::T, Trans::N, Tn, hs, Tn, 1.0f, dpb, Tn, TT, q, int(C3), hs, 1.0f,
                                dq + C, int(C3), hs, NH);
  }
}

}  // namespace zeropp::cuda
