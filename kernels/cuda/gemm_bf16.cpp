// kernels/gemm/gemm_bf16.hpp's mixed-precision GEMM on the GPU: both fp32 operands
// rounded to bf16 as stored (every element their leading dimension spans,
// so the copies keep lda and ldb), then cuBLAS on tensor cores with fp32
// accumulation into the fp32 C. The host's gemm_bf16 up to the summation
// order (kernels/cuda/matmul.cu states the agreement).
#include "kernels/cuda/bf16_operands.hpp"

namespace zeropp::cuda {

namespace {
// Elements spanned by a row-major operand of `rows` x `cols` (as stored) with leading dimension ld.
int64_t extent(Trans t, int m, int k, int ld) {
  const int rows = t == Trans::N ? m : k, cols = t == Trans::N ? k : m;
  return rows == 0 || cols == 0 ? 0 : int64_t(rows - 1) * ld + cols;
}
}  // namespace

void gemm_bf16(Blas& blas, Trans ta, Trans tb, int M, int N, int K, float alpha, const float* A, int lda,
               const float* B, int ldb, float beta, float* C, int ldc) {
  if (M == 0 || N == 0) return;
  const Bf16Copy a(A, extent(ta, M, K, lda), blas.stream()), b(B, extent(tb, K, N, ldb), blas.stream());
  mm(blas, ta, tb, M, N, K, a.get(), lda, b.get(), ldb, beta, C, ldc, alpha);
}

}  // namespace zeropp::cuda
