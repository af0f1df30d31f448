#include <array>
#include <catch2/catch.hpp>
#include <cmath>

#include "kernels/ops/residual.hpp"
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
