#include <catch2/catch.hpp>

#include "kernels/residual_layernorm.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEMPLATE_TEST_CASE("residual + layernorm (fused) matches the unfused composition", "[kernels][simd]", float,
                   double) {
  using T = TestType;
  std::mt19937 rng(42);
  for (auto [N, C] : {std::array<int, 2>{7, 13}, {1, 1}, {5, 130}}) {
    INFO("N=" << N << " C=" << C);
    const int64_t n = int64_t(N) * C;
    auto a = random_buf<T>(n, rng, -2, 3), b = random_buf<T>(n, rng, -1, 1);
    auto w = random_buf<T>(C, rng), bias = random_buf<T>(C, rng);
    // Garbage in the outputs: every entry is overwritten.
    auto res = random_buf<T>(n, rng, 50, 60), out = random_buf<T>(n, rng, 50, 60);
    auto mean = random_buf<T>(N, rng, 50, 60), rstd = random_buf<T>(N, rng, 50, 60);
    Buf<T> res_r("res_r", n), out_r("out_r", n), mean_r("mean_r", N), rstd_r("rstd_r", N);
    residual_layernorm_forward<T>(res, out, mean, rstd, a, b, w, bias, N, C);
    residual_layernorm_forward_reference<T>(res_r, out_r, mean_r, rstd_r, a, b, w, bias, N, C);
    require_close<T>(res, res_r, ref_tol<T>(), "res");
    require_close<T>(out, out_r, ref_tol<T>(), "out");
    require_close<T>(mean, mean_r, ref_tol<T>(), "mean");
    require_close<T>(rstd, rstd_r, ref_tol<T>(), "rstd");
  }
}
