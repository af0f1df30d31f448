// GEMM operands in bf16 for the mixed-precision products (kernels/precision.hpp)
// of the CUDA twins: a bf16 copy of fp32 values (round to nearest even, the
// collectives' to_bf16, as the host rounds), and one product with fp32 output
// on fp32 or bf16 operands, so that a twin writes its GEMMs once for both
// precisions (kernels/cuda/matmul.cu, lm_head_loss.cu, gemm_bf16.cpp).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/comm_kernels.cuh"
#include "kernels/cuda/gemm_cublas.hpp"

namespace zeropp::cuda {

// A bf16 copy of n floats on `stream` in stream-ordered scratch
// (cudaMallocAsync), freed on the stream at scope exit.
class Bf16Copy {
 public:
  Bf16Copy(const float* src, int64_t n, cudaStream_t stream) : stream_(stream) {
    ZCHECK_CUDA(
        cudaMallocAsync(reinterpret_cast<void**>(&bits_), size_t(std::max<int64_t>(n, 1)) * 2, stream));
    to_bf16(src, bits_, n, stream);
  }
  ~Bf16Copy() { ZCHECK_CUDA(cudaFreeAsync(bits_, stream_)); }
  Bf16Copy(const Bf16Copy&) = delete;
  Bf16Copy& operator=(const Bf16Copy&) = delete;
  // The same bits as __nv_bfloat16, cuBLAS's bf16 type.
  const __nv_bfloat16* get() const { return reinterpret_cast<const __nv_bfloat16*>(bits_); }

 private:
  uint16_t* bits_ = nullptr;
  cudaStream_t stream_;
};

// C[M,N] = alpha op(A) op(B) + beta C with fp32 C: fp32 operands, or bf16 ones
// with fp32 accumulation.
inline void mm(Blas& blas, Trans ta, Trans tb, int M, int N, int K, const float* A, int lda, const float* B,
               int ldb, float beta, float* C, int ldc, float alpha = 1.0f) {
  gemm<float>(blas, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
inline void mm(Blas& blas, Trans ta, Trans tb, int M, int N, int K, const __nv_bfloat16* A, int lda,
               const __nv_bfloat16* B, int ldb, float beta, float* C, int ldc, float alpha = 1.0f) {
  gemm_bf16_fp32(blas, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace zeropp::cuda
