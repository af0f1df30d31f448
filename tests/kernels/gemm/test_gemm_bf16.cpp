// bf16 GEMM against its reference and against the fp32 GEMM, for each of its
// kernels this CPU has (oneDNN's matmul, the BLAS on rounded operands).
//
// Bounds, per element of C = alpha·op(A)·op(B) + beta·C, with S = sum_k |a_k b_k|:
//  - against gemm_bf16_reference (same bf16 operands, double sums): a product
//    of two bf16 numbers is exact in fp32, so only the fp32 summation
//    differs: |err| <= (K + 2)·2^-24·(|alpha|·S + |beta·C|), here taken as 4·K·2^-24.
//    A kernel summing in bf16 instead would be off by ~2^-9·S: far outside.
//  - against the fp32 GEMM: each operand moves by at most 2^-9 of itself when
//    rounded to bf16, so each product by at most ~2^-8: |err| <= 2^-8·|alpha|·S.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

#include "kernels/gemm/gemm_bf16.hpp"
#include "kernels/runtime/cpu_features.hpp"

using namespace zeropp;

namespace {
struct Case {
  Trans ta, tb;
  int M, N, K, lda, ldb, ldc;
  std::vector<float> A, B, C0;
  // S for element (i, j): the scale of both bounds.
  double abs_sum(int i, int j) const {
    double s = 0;
    for (int k = 0; k < K; ++k) {
      const float a = ta == Trans::N ? A[size_t(i) * lda + k] : A[size_t(k) * lda + i];
      const float b = tb == Trans::N ? B[size_t(k) * ldb + j] : B[size_t(j) * ldb + k];
      s += std::abs(double(a) * double(b));
    }
    return s;
  }
};

// The kernels to test here: the BLAS on rounded operands always, oneDNN's
// matmul where oneDNN has one (from AVX-512 up).
std::vector<Bf16Kernel> kernels_here() {
  std::vector<Bf16Kernel> k{Bf16Kernel::RoundedBlas};
  try {
    force_bf16_kernel(Bf16Kernel::OneDnn);
    k.push_back(Bf16Kernel::OneDnn);
  } catch (const std::invalid_argument&) {
    WARN("oneDNN has no bf16 matmul here: only the BLAS on rounded operands is tested");
  }
  force_bf16_kernel(std::nullopt);
  return k;
}

// Forces a kernel for one scope.
struct ForceKernel {
  explicit ForceKernel(Bf16Kernel k) { force_bf16_kernel(k); }
  ~ForceKernel() { force_bf16_kernel(std::nullopt); }
};

// Operands with padding columns (ld > columns) and values of mixed magnitude.
Case make_case(Trans ta, Trans tb, int M, int N, int K, std::mt19937& rng) {
  std::normal_distribution<float> n01(0, 1);
  Case c{ta, tb, M, N, K, (ta == Trans::N ? K : M) + 3, (tb == Trans::N ? N : K) + 2, N + 1, {}, {}, {}};
  c.A.resize(size_t(ta == Trans::N ? M : K) * c.lda);
  c.B.resize(size_t(tb == Trans::N ? K : N) * c.ldb);
  c.C0.resize(size_t(M) * c.ldc);
  for (auto* v : {&c.A, &c.B, &c.C0})
    for (auto& x : *v) x = n01(rng) * std::exp2(float(int(rng() % 7) - 3));
  return c;
}
}  // namespace

TEST_CASE("gemm_bf16 matches the bf16 reference within fp32 summation error", "[kernels][bf16]") {
  std::mt19937 rng(5);
  WARN("bf16 GEMM: " << gemm_bf16_backend_name());
  for (Bf16Kernel kernel : kernels_here())
    for (Trans ta : {Trans::N, Trans::T})
      for (Trans tb : {Trans::N, Trans::T})
        for (auto [alpha, beta] : {std::pair{1.0f, 0.0f}, std::pair{0.5f, 1.0f}, std::pair{1.0f, 2.0f}}) {
          const Case c = make_case(ta, tb, 37, 29, 301, rng);
          std::vector<float> C = c.C0, R = c.C0;
          const ForceKernel force(kernel);
          gemm_bf16(ta, tb, c.M, c.N, c.K, alpha, c.A.data(), c.lda, c.B.data(), c.ldb, beta, C.data(),
                    c.ldc);
          gemm_bf16_reference(ta, tb, c.M, c.N, c.K, alpha, c.A.data(), c.lda, c.B.data(), c.ldb, beta,
                              R.data(), c.ldc);
          for (int i = 0; i < c.M; ++i) {
            for (int j = 0; j < c.N; ++j) {
              const size_t e = size_t(i) * c.ldc + j;
              const double scale = std::abs(alpha) * c.abs_sum(i, j) + std::abs(beta * c.C0[e]);
              INFO(gemm_bf16_backend_name()
                   << ": ta " << int(ta) << " tb " << int(tb) << " alpha " << alpha << " beta " << beta
                   << " (" << i << "," << j << "): " << C[e] << " vs " << R[e]);
              REQUIRE(std::abs(double(C[e]) - double(R[e])) <= 4.0 * c.K * std::exp2(-24) * scale);
            }
            for (int j = c.N; j < c.ldc; ++j)
              REQUIRE(C[size_t(i) * c.ldc + j] == c.C0[size_t(i) * c.ldc + j]);
          }
        }
}

TEST_CASE("gemm_bf16 is within bf16 operand rounding of the fp32 GEMM, and rounds", "[kernels][bf16]") {
  std::mt19937 rng(6);
  for (Bf16Kernel kernel : kernels_here())
    for (Trans ta : {Trans::N, Trans::T})
      for (Trans tb : {Trans::N, Trans::T}) {
        const Case c = make_case(ta, tb, 64, 48, 128, rng);
        std::vector<float> C = c.C0, F = c.C0;
        const ForceKernel force(kernel);
        INFO(gemm_bf16_backend_name());
        gemm_bf16(ta, tb, c.M, c.N, c.K, 1.0f, c.A.data(), c.lda, c.B.data(), c.ldb, 0.0f, C.data(), c.ldc);
        gemm<float>(ta, tb, c.M, c.N, c.K, 1.0f, c.A.data(), c.lda, c.B.data(), c.ldb, 0.0f, F.data(), c.ldc);
        double worst = 0, err2 = 0, ref2 = 0;
        for (int i = 0; i < c.M; ++i)
          for (int j = 0; j < c.N; ++j) {
            const size_t e = size_t(i) * c.ldc + j;
            const double err = std::abs(double(C[e]) - double(F[e])), s = c.abs_sum(i, j);
            REQUIRE(err <= std::exp2(-8) * s);
            worst = std::max(worst, err / s);
            err2 += err * err;
            ref2 += double(F[e]) * F[e];
          }
        // Operands really are rounded: bf16 keeps 8 significant bits, so a
        // product of random fp32 values cannot agree with fp32 to 1e-5.
        REQUIRE(std::sqrt(err2 / ref2) > 1e-5);
        WARN("bf16 vs fp32 GEMM: worst |err|/sum|ab| " << worst << ", relative L2 "
                                                       << std::sqrt(err2 / ref2));
      }
}

TEST_CASE("gemm_bf16 chooses oneDNN only on AMX", "[kernels][bf16]") {
  REQUIRE(choose_bf16_kernel(true, true) == Bf16Kernel::OneDnn);
  REQUIRE(choose_bf16_kernel(true, false) == Bf16Kernel::RoundedBlas);   // AVX512-BF16 or emulated bf16
  REQUIRE(choose_bf16_kernel(false, false) == Bf16Kernel::RoundedBlas);  // below AVX-512
}

TEST_CASE("gemm_bf16 rounds NaN, infinities and ties as the scalar conversion does", "[kernels][bf16]") {
  // 1 + 2^-8 is a tie (rounds to even 1), 1 + 3·2^-8 rounds up; the largest
  // float overflows bf16 to infinity; a signalling NaN comes back quiet.
  const float nan = std::numeric_limits<float>::signaling_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x{1.0f + std::exp2(-8.0f),
                             1.0f + 3 * std::exp2(-8.0f),
                             -3.0e38f,
                             3.4e38f,
                             inf,
                             -inf,
                             nan,
                             0.0f,
                             -0.0f,
                             1e-40f};
  const int K = int(x.size());
  const std::vector<float> one(size_t(K), 1.0f);
  for (Bf16Kernel kernel : kernels_here()) {
    const ForceKernel force(kernel);
    INFO(gemm_bf16_backend_name());
    for (int k = 0; k < K; ++k) {  // C = x_k · 1: one operand element at a time
      float c = 0, r = 0;
      gemm_bf16(Trans::N, Trans::N, 1, 1, 1, 1.0f, &x[size_t(k)], 1, one.data(), 1, 0.0f, &c, 1);
      gemm_bf16_reference(Trans::N, Trans::N, 1, 1, 1, 1.0f, &x[size_t(k)], 1, one.data(), 1, 0.0f, &r, 1);
      INFO("x = " << x[size_t(k)] << ": " << c << " vs " << r);
      if (std::isnan(r))
        REQUIRE(std::isnan(c));
      else if (kernel == Bf16Kernel::RoundedBlas || std::abs(r) >= 1e-37f)  // oneDNN may flush denormals
        REQUIRE(c == r);
    }
  }
}

TEST_CASE("gemm_bf16 says what runs it, honouring DNNL_MAX_CPU_ISA", "[kernels][bf16]") {
  const std::string name = gemm_bf16_backend_name();
  REQUIRE(name.find("oneDNN ") != std::string::npos);
  REQUIRE(name.find(", ISA ") != std::string::npos);
  if (bf16_kernel() == Bf16Kernel::RoundedBlas)
    REQUIRE(name.find("on bf16-rounded operands") != std::string::npos);
  // ctest's kernels_bf16_avx512_core and kernels_bf16_avx2 cap oneDNN's ISA:
  // the tests above then run oneDNN's emulated bf16 and the BLAS on rounded
  // operands, or the BLAS alone.
  const char* cap = std::getenv("DNNL_MAX_CPU_ISA");
  if (cap && std::string(cap) == "AVX512_CORE" && cpu_simd_isa() < SimdIsa::avx512) {
    // The cap cannot raise oneDNN above the CPU: this entry is then the AVX2 one.
    WARN("SKIPPED: this CPU has " << simd_isa_name(cpu_simd_isa()) << ", not AVX-512: " << name);
  } else if (cap && std::string(cap) == "AVX512_CORE") {
    REQUIRE(name.find("ISA avx512_core: no AMX") != std::string::npos);
    const ForceKernel force(Bf16Kernel::OneDnn);
    REQUIRE(gemm_bf16_backend_name().find("ISA avx512_core (bf16 emulated)") != std::string::npos);
  }
  if (cap && std::string(cap) == "AVX2") {
    REQUIRE(name.find("ISA avx2: no bf16 matmul") != std::string::npos);
    REQUIRE_THROWS_AS(force_bf16_kernel(Bf16Kernel::OneDnn), std::invalid_argument);
  }
}
