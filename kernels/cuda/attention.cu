// Causal multi-head self-attention on the GPU (kernels/ops/attention.hpp is the
// contract): the host's four GEMMs, as cuBLAS strided-batched calls over the
// NH heads of each batch element (kernels/cuda/gemm_cublas.hpp: fp32, or TF32
// where the handle allows it), with the same operands, strides and scale
// folded into alpha; between them the fused causal mask + softmax of
// kernels/cuda/causal_softmax.cu, as the host calls kernels/ops/causal_softmax.hpp.
//
// Forward: preatt = scale * q k^T, att = causal_softmax(preatt), out = att v.
// Backward: datt = dout v^T, dv += att^T dout, dpreatt =
// causal_softmax_backward(att, datt, scale), dq += dpreatt k, dk += dpreatt^T q
// (each part of dqkv one GEMM's output: beta = 0 for GradMode::Overwrite).
// Agreement with the host: cuBLAS sums in another order than OpenBLAS, and
// causal_softmax.cu's expf differs from the host's exponential by an ulp: relative 1e-5 of each output's
// magnitude at the model's shapes (fp32 GEMMs), the masked entries exactly 0.
#include <cmath>

#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

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
  causal_softmax_forward(att, preatt, int64_t(B) * NH * Tn, Tn, blas.stream());
  for (int b = 0; b < B; ++b) {
    const float* v = qkv + b * Tn * C3 + 2 * C;
    gemm_strided_batched<float>(blas, Trans::N, Trans::N, Tn, hs, Tn, 1.0f, att + b * NH * TT, Tn, TT, v,
                                int(C3), hs, 0.0f, out + int64_t(b) * Tn * C, C, hs, NH);
  }
}

void attention_backward(Blas& blas, float* dqkv, float* dpreatt, float* datt, const float* dout,
                        const float* qkv, const float* att, int B, int Tn, int C, int NH,
                        GradMode dqkv_mode) {
  const int hs = C / NH;
  const int64_t C3 = 3 * int64_t(C);
  const int64_t TT = int64_t(Tn) * Tn;
  const float scale = 1.0f / sqrtf(float(hs));
  const float beta = dqkv_mode == GradMode::Overwrite ? 0.0f : 1.0f;
  for (int b = 0; b < B; ++b) {
    const float* dy = dout + int64_t(b) * Tn * C;
    const float* v = qkv + b * Tn * C3 + 2 * C;
    gemm_strided_batched<float>(blas, Trans::N, Trans::T, Tn, Tn, hs, 1.0f, dy, C, hs, v, int(C3), hs, 0.0f,
                                datt + b * NH * TT, Tn, TT, NH);
    gemm_strided_batched<float>(blas, Trans::T, Trans::N, Tn, hs, Tn, 1.0f, att + b * NH * TT, Tn, TT, dy, C,
                                hs, beta, dqkv + b * Tn * C3 + 2 * C, int(C3), hs, NH);
  }
  causal_softmax_backward(dpreatt, att, datt, int64_t(B) * NH * Tn, Tn, scale, blas.stream());
  for (int b = 0; b < B; ++b) {
    const float* q = qkv + b * Tn * C3;
    float* dq = dqkv + b * Tn * C3;
    const float* dpb = dpreatt + b * NH * TT;
    gemm_strided_batched<float>(blas, Trans::N, Trans::N, Tn, hs, Tn, 1.0f, dpb, Tn, TT, q + C, int(C3), hs,
                                beta, dq, int(C3), hs, NH);
    gemm_strided_batched<float>(blas, Trans::T, Trans::N, Tn, hs, Tn, 1.0f, dpb, Tn, TT, q, int(C3), hs, beta,
                                dq + C, int(C3), hs, NH);
  }
}

}  // namespace zeropp::cuda
