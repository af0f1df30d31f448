// cuBLAS GEMM: kernels/gemm/gemm.hpp's interface on device pointers.
//
// Row-major C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C, leading
// dimensions in elements, exactly as zeropp::gemm (kernels/gemm/gemm.hpp); the
// row-major product is computed as the column-major C^T = op(B)^T op(A)^T.
//   float:         fp32 in/out, CUBLAS_COMPUTE_32F (IEEE fp32 FMA, no tensor
//                  cores) unless the handle allows TF32 (CUBLAS_COMPUTE_32F_FAST_TF32,
//                  tensor cores, 10-bit mantissa inputs).
//   __nv_bfloat16: bf16 A, B and C, fp32 accumulation (CUBLAS_COMPUTE_32F) on
//                  tensor cores; alpha and beta are fp32.
//   gemm_bf16_fp32: bf16 A and B, fp32 C, fp32 accumulation on tensor cores:
//                  kernels/gemm/gemm_bf16.hpp's mixed precision once A and B are
//                  rounded to bf16 (a product of two bf16 is exact in fp32);
//                  gemm_bf16 rounds fp32 A and B first.
// Calls are asynchronous on the handle's stream; a cuBLAS error throws
// std::runtime_error naming the call and the status.
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "kernels/gemm/gemm.hpp"

namespace zeropp::cuda {

// A cuBLAS handle bound to a stream (the compute stream of this rank).
class Blas {
 public:
  explicit Blas(cudaStream_t stream = nullptr, bool allow_tf32 = false);
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;

  cublasHandle_t handle() const { return handle_; }
  cudaStream_t stream() const { return stream_; }
  bool allow_tf32() const { return allow_tf32_; }

 private:
  cublasHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  bool allow_tf32_ = false;
};

template <class T>
void gemm(Blas& blas, Trans ta, Trans tb, int M, int N, int K, float alpha, const T* A, int lda, const T* B,
          int ldb, float beta, T* C, int ldc);

void gemm_bf16_fp32(Blas& blas, Trans ta, Trans tb, int M, int N, int K, float alpha, const __nv_bfloat16* A,
                    int lda, const __nv_bfloat16* B, int ldb, float beta, float* C, int ldc);

// kernels/gemm/gemm_bf16.hpp's gemm_bf16: fp32 A, B and C; A and B rounded to bf16
// (round to nearest even, into stream-ordered scratch), then gemm_bf16_fp32
// (kernels/cuda/gemm_bf16.cpp).
void gemm_bf16(Blas& blas, Trans ta, Trans tb, int M, int N, int K, float alpha, const float* A, int lda,
               const float* B, int ldb, float beta, float* C, int ldc);

template <class T>
void gemm_strided_batched(Blas& blas, Trans ta, Trans tb, int M, int N, int K, float alpha, const T* A,
                          int lda, int64_t strideA, const T* B, int ldb, int64_t strideB, float beta, T* C,
                          int ldc, int64_t strideC, int batch);

// "cuBLAS 13.0.2 (fp32, bf16 tensor-op with fp32 accumulation)"
std::string gemm_backend_name();

}  // namespace zeropp::cuda
