#include "kernels/gemm/gemm.hpp"

#include <cblas.h>
#include <omp.h>

#include <stdexcept>

#include "kernels/runtime/device_dispatch.hpp"
#include "kernels/runtime/device_memory.hpp"
#ifdef ZEROPP_BLAS_BLIS
#include <blis.h>
#endif

namespace zeropp {

namespace {
CBLAS_TRANSPOSE cb(Trans t) { return t == Trans::N ? CblasNoTrans : CblasTrans; }

void blas_gemm(Trans ta, Trans tb, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
               int ldb, float beta, float* C, int ldc) {
  cblas_sgemm(CblasRowMajor, cb(ta), cb(tb), M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
void blas_gemm(Trans ta, Trans tb, int M, int N, int K, double alpha, const double* A, int lda,
               const double* B, int ldb, double beta, double* C, int ldc) {
  cblas_dgemm(CblasRowMajor, cb(ta), cb(tb), M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
}  // namespace

template <class T>
void gemm(Trans ta, Trans tb, int M, int N, int K, T alpha, const T* A, int lda, const T* B, int ldb, T beta,
          T* C, int ldc) {
  ZEROPP_ON_DEVICE(T, "gemm",
                   cuda::gemm<float>(*ZD->blas, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc));
  if (M == 0 || N == 0) return;
  const DeviceAccess access;  // BLAS is a kernel too, outside Kokkos' callbacks
  blas_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <class T>
void gemm_reference(Trans ta, Trans tb, int M, int N, int K, T alpha, const T* A, int lda, const T* B,
                    int ldb, T beta, T* C, int ldc) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double acc = 0;
      for (int k = 0; k < K; ++k) {
        const T a = ta == Trans::N ? A[int64_t(i) * lda + k] : A[int64_t(k) * lda + i];
        const T b = tb == Trans::N ? B[int64_t(k) * ldb + j] : B[int64_t(j) * ldb + k];
        acc += double(a) * double(b);
      }
      T& c = C[int64_t(i) * ldc + j];
      c = T(alpha * acc + (beta == T(0) ? T(0) : beta * c));
    }
}

void set_gemm_threads(int n) {
  if (n < 1) throw std::invalid_argument("GEMM threads must be at least 1, got " + std::to_string(n));
#ifdef ZEROPP_BLAS_OPENBLAS
  openblas_set_num_threads(n);
#elif defined(ZEROPP_BLAS_BLIS)
  bli_thread_set_num_threads(n);
#endif
  omp_set_num_threads(n);
}

std::string gemm_backend_name() {
#ifdef ZEROPP_BLAS_OPENBLAS
  return std::string(openblas_get_config()) + " (" + std::to_string(openblas_get_num_threads()) + " threads)";
#elif defined(ZEROPP_BLAS_BLIS)
  const long n = long(bli_thread_get_num_threads());
  return std::string("BLIS ") + bli_info_get_version_str() + " " + bli_arch_string(bli_arch_query_id()) +
         " (" + std::to_string(n) + (n == 1 ? " thread)" : " threads)");
#else
  return "CBLAS";
#endif
}

#define ZEROPP_INSTANTIATE_GEMM(T)                                                                 \
  template void gemm<T>(Trans, Trans, int, int, int, T, const T*, int, const T*, int, T, T*, int); \
  template void gemm_reference<T>(Trans, Trans, int, int, int, T, const T*, int, const T*, int, T, T*, int);
ZEROPP_INSTANTIATE_GEMM(float)
ZEROPP_INSTANTIATE_GEMM(double)

}  // namespace zeropp
