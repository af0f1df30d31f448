// Causal attention of new queries against a key/value cache on the GPU
// (kernels/ops/attention_decode.hpp is the contract): the host's two GEMMs as
// cuBLAS strided-batched calls over the NH heads of each sequence (scores =
// scale * q K^T over the Tk = pos + Tn cached keys, out = att V), with the
// same operands and strides, and between them the causal softmax of
// causal_softmax.cu in place, row r of each sequence seeing keys up to
// pos + r % Tn. Agreement with the host twin as attention.cu's: cuBLAS sums
// in another order than the host's GEMM and expf differs by an ulp, so
// relative 1e-4 and absolute 1e-5 of outputs of magnitude 1; columns past a
// query's position exactly 0.
#include <cmath>

#include "kernels/cuda/causal_softmax.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

void attention_decode(Blas& blas, float* out, float* att, const float* qkv, const float* kcache,
                      const float* vcache, int B, int Tn, int pos, int Tmax, int C, int NH) {
  const int hs = C / NH, Tk = pos + Tn;
  const int64_t C3 = 3 * int64_t(C), TTk = int64_t(Tn) * Tk;
  const float scale = 1.0f / sqrtf(float(hs));
  for (int b = 0; b < B; ++b)
    gemm_strided_batched<float>(blas, Trans::N, Trans::T, Tn, Tk, hs, scale, qkv + b * Tn * C3, int(C3), hs,
                                kcache + int64_t(b) * Tmax * C, C, hs, 0.0f, att + b * NH * TTk, Tk, TTk, NH);
  detail::causal_softmax_rows(att, att, int64_t(B) * NH * Tn, Tn, Tk, pos, blas.stream());
  for (int b = 0; b < B; ++b)
    gemm_strided_batched<float>(blas, Trans::N, Trans::N, Tn, hs, Tk, 1.0f, att + b * NH * TTk, Tk, TTk,
                                vcache + int64_t(b) * Tmax * C, C, hs, 0.0f, out + int64_t(b) * Tn * C, C, hs,
                                NH);
}

}  // namespace zeropp::cuda
