#include "kernels/gemm/gemm_bf16.hpp"

#include <omp.h>

#include <stdexcept>
#include <type_traits>
#include <vector>

#include "kernels/gemm/onednn.hpp"
#include "kernels/ops/convert.hpp"
#include "kernels/runtime/device_dispatch.hpp"
#include "src/base/bf16.hpp"
#include "src/base/build_features.hpp"

namespace zeropp {

namespace {

// Rows and columns of op(X)'s storage: X is [rows, cols] with leading dimension ld.
struct Stored {
  int rows, cols;
};
Stored stored(Trans t, int m, int k) { return t == Trans::N ? Stored{m, k} : Stored{k, m}; }

// Elements from the first of the stored matrix to its last.
int64_t stored_extent(int ld, Stored s) {
  return s.rows > 0 && s.cols > 0 ? int64_t(s.rows - 1) * ld + s.cols : 0;
}

// Rounds the stored [rows, cols] fp32 matrix (leading dimension ld) into a
// packed bf16 buffer (leading dimension cols), through oneDNN's vectorised
// conversion (a scalar loop costs as much as the product itself on the
// model's shapes).
void pack_bf16(const float* x, int ld, Stored s, std::vector<uint16_t>& out) {
  out.resize(size_t(s.rows) * size_t(s.cols));
  onednn_round_to_bf16(x, s.rows, s.cols, ld, out.data());
}

// The stored matrix (same leading dimension) with every element rounded to
// bf16 by the scalar conversion of src/base/bf16.hpp (the reference's rounding).
void rounded_copy(const float* x, int ld, Stored s, std::vector<float>& out) {
  out.assign(x, x + stored_extent(ld, s));
  round_to_bf16(out.data(), int64_t(out.size()));
}

// The stored matrix rounded by convert's vectorised kernel (the same bits as
// rounded_copy's scalar loop), into a buffer that keeps its capacity.
void rounded_copy_fast(const float* x, int ld, Stored s, std::vector<float>& out) {
  out.resize(size_t(stored_extent(ld, s)));
  const int64_t n = int64_t(out.size());
  round_to_bf16(CVec<float>(x, n), Vec<float>(out.data(), n), n);
}

// oneDNN 2.6 has bf16 matmuls from AVX-512 (core) up: on AMX tiles, native on
// AVX512-BF16, emulated on plain AVX-512; none below (AVX2 and older, or
// DNNL_MAX_CPU_ISA capping it).
bool onednn_has_bf16_matmul() {
  static const bool yes = onednn_has_avx512();
  return yes;
}
bool onednn_on_amx() {
  static const bool yes = onednn_has_amx();
  return yes;
}

std::optional<Bf16Kernel>& forced_kernel() {
  static std::optional<Bf16Kernel> k;
  return k;
}

}  // namespace

Bf16Kernel choose_bf16_kernel(bool onednn_bf16, bool amx) {
  return onednn_bf16 && amx ? Bf16Kernel::OneDnn : Bf16Kernel::RoundedBlas;
}

void force_bf16_kernel(std::optional<Bf16Kernel> k) {
  if (k == Bf16Kernel::OneDnn && !onednn_has_bf16_matmul())
    throw std::invalid_argument("no oneDNN bf16 matmul here (" + onednn_version_isa() + ")");
  forced_kernel() = k;
}

Bf16Kernel bf16_kernel() {
  return forced_kernel().value_or(choose_bf16_kernel(onednn_has_bf16_matmul(), onednn_on_amx()));
}

void gemm_bf16(Trans ta, Trans tb, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
               int ldb, float beta, float* C, int ldc) {
  ZEROPP_ON_DEVICE(float, "gemm_bf16",
                   cuda::gemm_bf16(*ZD->blas, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc));
  if (M == 0 || N == 0) return;
  if (bf16_kernel() == Bf16Kernel::RoundedBlas || K == 0) {  // K = 0: oneDNN rejects empty sums; C = beta·C
    static thread_local std::vector<float> a, b;
    rounded_copy_fast(A, lda, stored(ta, M, K), a);
    rounded_copy_fast(B, ldb, stored(tb, K, N), b);
    gemm<float>(ta, tb, M, N, K, alpha, a.data(), lda, b.data(), ldb, beta, C, ldc);
    return;
  }
  static thread_local std::vector<uint16_t> a16, b16;
  const Stored sa = stored(ta, M, K), sb = stored(tb, K, N);
  pack_bf16(A, lda, sa, a16);
  pack_bf16(B, ldb, sb, b16);
  const MatmulShape shape{MatmulType::BF16, ta, tb, M, N, K, 1, sa.cols, sb.cols, ldc, 0, 0, 0, alpha, beta};
  onednn_matmul(shape, a16.data(), b16.data(), C);
}

template <class T>
void gemm_as(Precision prec, Trans ta, Trans tb, int M, int N, int K, T alpha, const T* A, int lda,
             const T* B, int ldb, T beta, T* C, int ldc) {
  if (prec == Precision::BF16) {
    if constexpr (std::is_same_v<T, float>)
      return gemm_bf16(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else
      throw std::invalid_argument("bf16 GEMMs need fp32 operands");
  }
  gemm<T>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
template void gemm_as<float>(Precision, Trans, Trans, int, int, int, float, const float*, int, const float*,
                             int, float, float*, int);
template void gemm_as<double>(Precision, Trans, Trans, int, int, int, double, const double*, int,
                              const double*, int, double, double*, int);

void gemm_bf16_reference(Trans ta, Trans tb, int M, int N, int K, float alpha, const float* A, int lda,
                         const float* B, int ldb, float beta, float* C, int ldc) {
  std::vector<float> a, b;
  rounded_copy(A, lda, stored(ta, M, K), a);
  rounded_copy(B, ldb, stored(tb, K, N), b);
  gemm_reference<float>(ta, tb, M, N, K, alpha, a.data(), lda, b.data(), ldb, beta, C, ldc);
}

std::string gemm_bf16_backend_name() {
  const std::string onednn = onednn_version_isa();
  if (bf16_kernel() == Bf16Kernel::RoundedBlas)
    return gemm_backend_name() + " on bf16-rounded operands (" + onednn +
           (!onednn_in_build()         ? ")"
            : onednn_has_bf16_matmul() ? ": no AMX)"
                                       : ": no bf16 matmul)");
  const int threads = omp_get_max_threads();
  return onednn + (onednn_native_bf16() ? " (native bf16)" : " (bf16 emulated)") + ", " +
         std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

}  // namespace zeropp
