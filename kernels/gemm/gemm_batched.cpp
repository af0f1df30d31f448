#include "kernels/gemm/gemm_batched.hpp"

#include <omp.h>

#include <stdexcept>
#include <type_traits>

#include "kernels/gemm/gemm.hpp"
#include "kernels/gemm/onednn.hpp"
#include "kernels/runtime/device_dispatch.hpp"
#include "kernels/runtime/device_memory.hpp"
#include "src/base/build_features.hpp"

namespace zeropp {

namespace {
BatchedKernel& forced_kernel() {
  static BatchedKernel k = BatchedKernel::Auto;
  return k;
}
}  // namespace

BatchedKernel choose_batched_kernel(bool onednn_avx512, int threads) {
  return onednn_avx512 && threads == 1 ? BatchedKernel::OneDnn : BatchedKernel::Blas;
}

void force_batched_kernel(BatchedKernel k) {
  if (k == BatchedKernel::OneDnn && !onednn_in_build())
    throw std::invalid_argument("batched GEMM kernel 'onednn': this build has no oneDNN");
  forced_kernel() = k;
}

BatchedKernel batched_kernel() {
  static const bool avx512 = onednn_has_avx512();
  const BatchedKernel forced = forced_kernel();
  return forced != BatchedKernel::Auto ? forced : choose_batched_kernel(avx512, omp_get_max_threads());
}

template <class T>
void gemm_strided_batched(Trans ta, Trans tb, int M, int N, int K, T alpha, const T* A, int lda,
                          int64_t strideA, const T* B, int ldb, int64_t strideB, T beta, T* C, int ldc,
                          int64_t strideC, int batch) {
  ZEROPP_ON_DEVICE(T, "gemm_strided_batched",
                   cuda::gemm_strided_batched<float>(*ZD->blas, ta, tb, M, N, K, alpha, A, lda, strideA, B,
                                                     ldb, strideB, beta, C, ldc, strideC, batch));
  if (M == 0 || N == 0 || batch == 0) return;
  // K = 0 (C = beta·C) goes to the BLAS: oneDNN rejects empty sums.
  if constexpr (std::is_same_v<T, float>) {
    if (batched_kernel() == BatchedKernel::OneDnn && K > 0) {
      const DeviceAccess access;  // a kernel outside Kokkos' callbacks, as the BLAS in gemm()
      onednn_matmul(
          {MatmulType::F32, ta, tb, M, N, K, batch, lda, ldb, ldc, strideA, strideB, strideC, alpha, beta}, A,
          B, C);
      return;
    }
  }
  for (int i = 0; i < batch; ++i)
    gemm(ta, tb, M, N, K, alpha, A + i * strideA, lda, B + i * strideB, ldb, beta, C + i * strideC, ldc);
}
template void gemm_strided_batched<float>(Trans, Trans, int, int, int, float, const float*, int, int64_t,
                                          const float*, int, int64_t, float, float*, int, int64_t, int);
template void gemm_strided_batched<double>(Trans, Trans, int, int, int, double, const double*, int, int64_t,
                                           const double*, int, int64_t, double, double*, int, int64_t, int);

std::string gemm_batched_backend_name() {
  const int threads = omp_get_max_threads();
  const std::string name = batched_kernel() == BatchedKernel::OneDnn
                               ? onednn_version_isa() + ": fp32 matmul, a batch per call, " +
                                     std::to_string(threads) + (threads == 1 ? " thread" : " threads")
                               : gemm_backend_name() + ", one call per product";
  return name + (forced_kernel() != BatchedKernel::Auto ? " (forced)" : "");
}

}  // namespace zeropp
