// GEMM: the one interface through which every matrix product goes.
//
// Row-major C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C, with
// op(X) = X or X^T, leading dimensions in elements. On hosts it calls CBLAS
// (OpenBLAS); a cuBLAS backend slots in behind the same functions. The
// strided-batched form runs `batch` independent products whose operands
// start `stride*` elements apart (attention heads); its kernel choice is in
// gemm_batched.hpp.
#pragma once

#include <cstdint>
#include <string>

namespace zeropp {

enum class Trans { N, T };

template <class T>
void gemm(Trans ta, Trans tb, int M, int N, int K, T alpha, const T* A, int lda, const T* B, int ldb, T beta,
          T* C, int ldc);

template <class T>
void gemm_strided_batched(Trans ta, Trans tb, int M, int N, int K, T alpha, const T* A, int lda,
                          int64_t strideA, const T* B, int ldb, int64_t strideB, T beta, T* C, int ldc,
                          int64_t strideC, int batch);

// Plain triple-loop reference (tests compare the fast path against it).
template <class T>
void gemm_reference(Trans ta, Trans tb, int M, int N, int K, T alpha, const T* A, int lda, const T* B,
                    int ldb, T beta, T* C, int ldc);

// Threads of each GEMM library in this process (n >= 1): the BLAS's own
// pool and OpenMP's, which oneDNN uses. The model's other kernels stay on one
// thread: Debian's Kokkos 3.4 has only the Serial backend.
void set_gemm_threads(int n);

// "OpenBLAS 0.3.21 (1 thread)": what the start-up table and bench print.
std::string gemm_backend_name();

}  // namespace zeropp
