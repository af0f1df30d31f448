// GEMM on bf16 operands with fp32 accumulation and fp32 output (mixed precision).
//
// Row-major C[M,N] = alpha * op(bf16(A))[M,K] * op(bf16(B))[K,N] + beta * C:
// A, B and C are fp32 arrays as in gemm.hpp; A and B are rounded to the
// nearest bf16 (ties to even) before the product, the products are summed
// in fp32 and C stays fp32. This is what train.precision = bf16 runs for the
// model's matrix products (PyTorch's CPU autocast to bfloat16 does the same).
//
// Runs on oneDNN's matmul primitive (one primitive per shape, cached), which
// picks its kernels from the CPU's features at run time: AMX or AVX512-BF16
// where the CPU has them, an emulation of bf16 on plain AVX-512. oneDNN 2.6
// has no bf16 matmul below AVX-512; there (or with DNNL_MAX_CPU_ISA capping
// it) the fp32 BLAS runs on bf16-rounded copies of A and B: the same
// numbers up to the summation order. gemm_bf16_backend_name() says which runs.
#pragma once

#include <string>

#include "kernels/gemm.hpp"
#include "kernels/precision.hpp"

namespace zeropp {

void gemm_bf16(Trans ta, Trans tb, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
               int ldb, float beta, float* C, int ldc);

// gemm<T> (FP32) or gemm_bf16 (BF16, T = float only; double throws
// std::invalid_argument), as `prec` says.
template <class T>
void gemm_as(Precision prec, Trans ta, Trans tb, int M, int N, int K, T alpha, const T* A, int lda,
             const T* B, int ldb, T beta, T* C, int ldc);

// Triple loop on the bf16-rounded operands, accumulated in double: what
// gemm_bf16 computes up to the fp32 summation order.
void gemm_bf16_reference(Trans ta, Trans tb, int M, int N, int K, float alpha, const float* A, int lda,
                         const float* B, int ldb, float beta, float* C, int ldc);

// What runs the bf16 GEMMs here: "oneDNN 2.6.3, ISA avx512_core_bf16 (native
// bf16), 1 thread", "... ISA avx512_core (bf16 emulated) ..." or, below
// AVX-512, "<gemm_backend_name()> on bf16-rounded operands (oneDNN 2.6.3,
// ISA avx2 has no bf16 matmul)".
std::string gemm_bf16_backend_name();

}  // namespace zeropp
