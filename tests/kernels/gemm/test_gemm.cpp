#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "kernels/gemm/gemm.hpp"

using namespace zeropp;

TEST_CASE("gemm matches the reference for every transpose combination", "[kernels]") {
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(-1, 1);
  const int M = 7, N = 5, K = 9;
  for (Trans ta : {Trans::N, Trans::T})
    for (Trans tb : {Trans::N, Trans::T}) {
      std::vector<double> A(M * K), B(K * N), C(M * N), R(M * N);
      for (auto& x : A) x = u(rng);
      for (auto& x : B) x = u(rng);
      for (size_t i = 0; i < C.size(); ++i) C[i] = R[i] = u(rng);
      const int lda = ta == Trans::N ? K : M, ldb = tb == Trans::N ? N : K;
      gemm(ta, tb, M, N, K, 0.5, A.data(), lda, B.data(), ldb, 2.0, C.data(), N);
      gemm_reference(ta, tb, M, N, K, 0.5, A.data(), lda, B.data(), ldb, 2.0, R.data(), N);
      for (size_t i = 0; i < C.size(); ++i) REQUIRE(C[i] == Approx(R[i]).epsilon(1e-12));
    }
}
