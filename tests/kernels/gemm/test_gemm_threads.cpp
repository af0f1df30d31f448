// Thread-count invariance of the GEMMs (train.threads): the same products with
// one and with two threads per library.
//
// OpenBLAS's and oneDNN's threads split C into blocks of rows and columns and
// each element's sum over K stays in one thread, in the same order: the
// results are then bitwise equal. Neither library promises it (either may
// split K on shapes with small M·N), so a difference within fp32 summation
// error, 4·K·2^-24·sum|a·b|, is reported and accepted; anything larger fails.
#include <omp.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/gemm/gemm.hpp"
#include "kernels/gemm/gemm_bf16.hpp"

using namespace zeropp;

namespace {

// C = A·op(B) on the model's kind of shapes (tiny's fc layer), with `threads` threads.
std::vector<float> product(int threads, bool bf16, Trans ta, Trans tb, int M, int N, int K,
                           const std::vector<float>& A, const std::vector<float>& B) {
  set_gemm_threads(threads);
  // Both libraries took the count (OpenBLAS grows its pool past OPENBLAS_NUM_THREADS=1).
  const std::string count = std::to_string(threads) + " thread";
  REQUIRE(gemm_backend_name().find("(" + count) != std::string::npos);
  REQUIRE(omp_get_max_threads() == threads);  // oneDNN's
  std::vector<float> C(size_t(M) * N, 0.5f);
  const int lda = ta == Trans::N ? K : M, ldb = tb == Trans::N ? N : K;
  if (bf16)
    gemm_bf16(ta, tb, M, N, K, 1.0f, A.data(), lda, B.data(), ldb, 1.0f, C.data(), N);
  else
    gemm<float>(ta, tb, M, N, K, 1.0f, A.data(), lda, B.data(), ldb, 1.0f, C.data(), N);
  set_gemm_threads(1);
  return C;
}

}  // namespace

TEST_CASE("GEMMs give the same results on 1 and 2 threads", "[kernels][threads]") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  struct Shape {
    Trans ta, tb;
    int M, N, K;
  };
  // Forward, input gradient and weight gradient of a [256 -> 1024] layer over 512 tokens.
  const Shape shapes[] = {{Trans::N, Trans::N, 512, 1024, 256},
                          {Trans::N, Trans::T, 512, 256, 1024},
                          {Trans::T, Trans::N, 256, 1024, 512}};
  std::vector<std::pair<bool, Bf16Kernel>> variants{{false, Bf16Kernel::RoundedBlas},
                                                    {true, Bf16Kernel::RoundedBlas}};
  try {
    force_bf16_kernel(Bf16Kernel::OneDnn);
    variants.push_back({true, Bf16Kernel::OneDnn});
  } catch (const std::invalid_argument&) {
    WARN("oneDNN has no bf16 matmul here: its threads are not tested");
  }
  for (const auto& [bf16, kernel] : variants) {
    force_bf16_kernel(kernel);
    for (const Shape& s : shapes) {
      std::vector<float> A(size_t(s.M) * s.K), B(size_t(s.K) * s.N);
      for (auto* v : {&A, &B})
        for (auto& x : *v) x = u(rng);
      const auto one = product(1, bf16, s.ta, s.tb, s.M, s.N, s.K, A, B);
      const auto two = product(2, bf16, s.ta, s.tb, s.M, s.N, s.K, A, B);
      size_t differ = 0;
      double worst = 0;  // largest difference over its bound
      for (size_t e = 0; e < one.size(); ++e) {
        // |a·b| <= 1 per term, |C0| = 0.5: sum|a·b| + |C0| <= K + 0.5.
        const double bound = 4.0 * s.K * std::exp2(-24) * (s.K + 0.5);
        worst = std::max(worst, std::abs(double(one[e]) - double(two[e])) / bound);
        differ += one[e] != two[e];
      }
      INFO((bf16 ? gemm_bf16_backend_name() : gemm_backend_name())
           << ", " << s.M << "x" << s.N << "x" << s.K);
      REQUIRE(worst <= 1.0);
      if (differ > 0)
        WARN((bf16 ? "bf16 " : "fp32 ")
             << s.M << "x" << s.N << "x" << s.K << ": " << differ
             << " elements differ between 1 and 2 threads (within summation error)");
    }
  }
  force_bf16_kernel(std::nullopt);
}
