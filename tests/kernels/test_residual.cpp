#include <array>
#include <catch2/catch.hpp>
#include <cmath>

#include "kernels/residual.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEMPLATE_TEST_CASE("residual matches the reference", "[kernels][simd]", float, double) {
  using T = TestType;
  std::mt19937 rng(12);
  for (int64_t n : {1, 13, 1000}) {
    auto a = random_buf<T>(n, rng), b = random_buf<T>(n, rng);
    Buf<T> out("out", n), out_r("out_r", n);
    residual_forward<T>(out, a, b, n);
    residual_forward_reference<T>(out_r, a, b, n);
    require_close<T>(out, out_r, ref_tol<T>(), "out");

    auto dout = random_buf<T>(n, rng), da = random_buf<T>(n, rng), db = random_buf<T>(n, rng);
    auto da_r = copy_of<T>(da), db_r = copy_of<T>(db);
    residual_backward<T>(da, db, dout, n);
    residual_backward_reference<T>(da_r, db_r, dout, n);
    require_close<T>(da, da_r, ref_tol<T>(), "da");
    require_close<T>(db, db_r, ref_tol<T>(), "db");
  }
}

TEMPLATE_TEST_CASE("bias + residual (fused) matches the reference, bit for bit", "[kernels][simd]", float,
                   double) {
  using T = TestType;
  std::mt19937 rng(14);
  for (auto [N, C] : {std::array<int, 2>{7, 13}, {1, 1}, {300, 256}}) {  // 300 x 256: 3 row chunks
    INFO("N=" << N << " C=" << C);
    const int64_t n = int64_t(N) * C;
    auto a = random_buf<T>(n, rng, -2, 3), b = random_buf<T>(n, rng), bias = random_buf<T>(C, rng);
    auto out = random_buf<T>(n, rng, 50, 60);  // garbage: every entry is overwritten
    Buf<T> out_r("out_r", n);
    bias_residual_forward<T>(out, a, b, bias, N, C);
    bias_residual_forward_reference<T>(out_r, a, b, bias, N, C);
    // The same additions in the same order (a + (b + bias)): no tolerance.
    require_close<T>(out, out_r, 0, "out");
    // The bias is there: row n, column c of out - (a + b) is bias[c] up to rounding.
    for (int64_t i = 0; i < n; ++i)
      REQUIRE(std::abs(out(i) - (a(i) + b(i)) - bias(i % C)) <= 8 * ref_tol<T>());
  }
}

TEST_CASE("residual backward matches finite differences", "[kernels]") {
  std::mt19937 rng(13);
  const int64_t n = 11;
  auto a = random_buf<double>(n, rng), b = random_buf<double>(n, rng), R = random_buf<double>(n, rng);
  Buf<double> out("out", n), da("da", n), db("db", n);
  auto loss = [&] {
    residual_forward<double>(out, a, b, n);
    return dot(out, R);
  };
  residual_backward<double>(da, db, R, n);
  check_gradient("a", a, da, loss);
  check_gradient("b", b, db, loss);
  check_accumulates({da, db}, [&] { residual_backward<double>(da, db, R, n); });
}
