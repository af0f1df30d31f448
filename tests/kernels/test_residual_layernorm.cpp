#include <array>
#include <catch2/catch.hpp>
#include <cmath>

#include "kernels/residual_layernorm.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEMPLATE_TEST_CASE("residual + layernorm (fused) matches the unfused composition", "[kernels][simd]", float,
                   double) {
  using T = TestType;
  std::mt19937 rng(42);
  for (const bool with_b_bias : {false, true})
    for (auto [N, C] : {std::array<int, 2>{7, 13}, {1, 1}, {5, 130}, {300, 256}}) {
      INFO("N=" << N << " C=" << C << (with_b_bias ? ", with b_bias" : ", no b_bias"));
      const int64_t n = int64_t(N) * C;
      auto a = random_buf<T>(n, rng, -2, 3), b = random_buf<T>(n, rng, -1, 1);
      auto w = random_buf<T>(C, rng), bias = random_buf<T>(C, rng);
      const Buf<T> b_bias = with_b_bias ? random_buf<T>(C, rng) : Buf<T>();
      // Garbage in the outputs: every entry is overwritten.
      auto res = random_buf<T>(n, rng, 50, 60), out = random_buf<T>(n, rng, 50, 60);
      auto mean = random_buf<T>(N, rng, 50, 60), rstd = random_buf<T>(N, rng, 50, 60);
      Buf<T> res_r("res_r", n), out_r("out_r", n), mean_r("mean_r", N), rstd_r("rstd_r", N);
      residual_layernorm_forward<T>(res, out, mean, rstd, a, b, b_bias, w, bias, N, C);
      residual_layernorm_forward_reference<T>(res_r, out_r, mean_r, rstd_r, a, b, b_bias, w, bias, N, C);
      // res: the same additions in the same order (a + (b + b_bias)), no tolerance.
      require_close<T>(res, res_r, 0, "res");
      require_close<T>(out, out_r, ref_tol<T>(), "out");
      require_close<T>(mean, mean_r, ref_tol<T>(), "mean");
      require_close<T>(rstd, rstd_r, ref_tol<T>(), "rstd");
      // The twin is the composition: bias_residual_forward_reference (with b_bias) is tested
      // against bias_residual_forward; here the bias shows in res.
      for (int64_t i = 0; i < n; ++i) {
        const T expected = with_b_bias ? b_bias(i % C) : T(0);
        REQUIRE(std::abs(res(i) - (a(i) + b(i)) - expected) <= 8 * ref_tol<T>());
      }
    }
}
