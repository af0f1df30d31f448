#include <catch2/catch.hpp>
#include <cmath>

#include "kernels/ops/layernorm.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEMPLATE_TEST_CASE("layernorm matches the reference", "[kernels][simd]", float, double) {
  using T = TestType;
  std::mt19937 rng(3);
  // C = 130 spans three backward channel chunks.
  for (auto [N, C] : {std::array<int, 2>{7, 13}, {1, 1}, {5, 130}}) {
    auto inp = random_buf<T>(N * C, rng, -2, 3), w = random_buf<T>(C, rng), b = random_buf<T>(C, rng);
    Buf<T> out("out", N * C), mean("mean", N), rstd("rstd", N);
    Buf<T> out_r("out_r", N * C), mean_r("mean_r", N), rstd_r("rstd_r", N);
    layernorm_forward<T>(out, mean, rstd, inp, w, b, N, C);
    layernorm_forward_reference<T>(out_r, mean_r, rstd_r, inp, w, b, N, C);
    require_close<T>(out, out_r, ref_tol<T>(), "out");
    require_close<T>(mean, mean_r, ref_tol<T>(), "mean");
    require_close<T>(rstd, rstd_r, ref_tol<T>(), "rstd");

    auto dout = random_buf<T>(N * C, rng);
    auto dinp = random_buf<T>(N * C, rng), dw = random_buf<T>(C, rng), db = random_buf<T>(C, rng);
    auto dinp_r = copy_of<T>(dinp), dw_r = copy_of<T>(dw), db_r = copy_of<T>(db);
    layernorm_backward<T>(dinp, dw, db, dout, inp, w, mean, rstd, N, C);
    layernorm_backward_reference<T>(dinp_r, dw_r, db_r, dout, inp, w, mean, rstd, N, C);
    require_close<T>(dinp, dinp_r, 10 * ref_tol<T>(), "dinp");
    require_close<T>(dw, dw_r, 10 * ref_tol<T>(), "dweight");
    require_close<T>(db, db_r, 10 * ref_tol<T>(), "dbias");
  }
}

TEST_CASE("layernorm uses the biased variance and eps = 1e-5", "[kernels]") {
  const int N = 1, C = 4;
  Buf<double> inp("inp", C), w("w", C), b("b", C), out("out", C), mean("mean", N), rstd("rstd", N);
  for (int c = 0; c < C; ++c) {
    inp(c) = c + 1;  // mean 2.5, biased variance 1.25
    w(c) = 2;
    b(c) = 0.5;
  }
  layernorm_forward<double>(out, mean, rstd, inp, w, b, N, C);
  const double s = 1 / std::sqrt(1.25 + 1e-5);
  REQUIRE(mean(0) == Approx(2.5).epsilon(1e-15));
  REQUIRE(rstd(0) == Approx(s).epsilon(1e-15));
  for (int c = 0; c < C; ++c) REQUIRE(out(c) == Approx((c + 1 - 2.5) * s * 2 + 0.5).epsilon(1e-14));
}

TEST_CASE("layernorm backward matches finite differences", "[kernels]") {
  std::mt19937 rng(4);
  const int N = 3, C = 7;
  auto inp = random_buf<double>(N * C, rng, -2, 3), w = random_buf<double>(C, rng),
       b = random_buf<double>(C, rng), R = random_buf<double>(N * C, rng);
  Buf<double> out("out", N * C), mean("mean", N), rstd("rstd", N);
  Buf<double> dinp("dinp", N * C), dw("dw", C), db("db", C);
  auto loss = [&] {
    layernorm_forward<double>(out, mean, rstd, inp, w, b, N, C);
    return dot(out, R);
  };
  loss();
  layernorm_backward<double>(dinp, dw, db, R, inp, w, mean, rstd, N, C);
  check_gradient("inp", inp, dinp, loss);
  check_gradient("weight", w, dw, loss);
  check_gradient("bias", b, db, loss);
  loss();
  check_accumulates({dinp, dw, db},
                    [&] { layernorm_backward<double>(dinp, dw, db, R, inp, w, mean, rstd, N, C); });
}
