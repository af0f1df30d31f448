#include <catch2/catch.hpp>

#include "kernels/ops/rmsnorm.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEMPLATE_TEST_CASE("rmsnorm matches the reference", "[kernels]", float, double) {
  using T = TestType;
  std::mt19937 rng(20);
  for (auto [N, C] : {std::pair{1, 1}, std::pair{5, 7}, std::pair{9, 130}}) {
    auto inp = random_buf<T>(int64_t(N) * C, rng, -2, 2), w = random_buf<T>(C, rng);
    Buf<T> out("out", N * C), rstd("rstd", N), out_r("out_r", N * C), rstd_r("rstd_r", N);
    rmsnorm_forward<T>(out, rstd, inp, w, N, C);
    rmsnorm_forward_reference<T>(out_r, rstd_r, inp, w, N, C);
    require_close<T>(out, out_r, ref_tol<T>(), "out");
    require_close<T>(rstd, rstd_r, ref_tol<T>(), "rstd");
    auto dout = random_buf<T>(int64_t(N) * C, rng), dinp = random_buf<T>(int64_t(N) * C, rng);
    auto dw = random_buf<T>(C, rng);
    auto dinp_r = copy_of<T>(dinp), dw_r = copy_of<T>(dw);
    rmsnorm_backward<T>(dinp, dw, dout, inp, w, rstd, N, C);
    rmsnorm_backward_reference<T>(dinp_r, dw_r, dout, inp, w, rstd, N, C);
    require_close<T>(dinp, dinp_r, ref_tol<T>(), "dinp");
    require_close<T>(dw, dw_r, ref_tol<T>(), "dweight");
  }
}

TEST_CASE("rmsnorm divides by the root mean square", "[kernels]") {
  // x = (3, 4): rms = sqrt(12.5 + 1e-5); out = x / rms * w.
  Buf<double> inp("inp", 2), w("w", 2), out("out", 2), rstd("rstd", 1);
  inp(0) = 3, inp(1) = 4, w(0) = 1, w(1) = 2;
  rmsnorm_forward<double>(out, rstd, inp, w, 1, 2);
  const double r = 1 / std::sqrt(12.5 + 1e-5);
  REQUIRE(out(0) == Approx(3 * r).epsilon(1e-14));
  REQUIRE(out(1) == Approx(8 * r).epsilon(1e-14));
}

TEST_CASE("rmsnorm backward matches finite differences", "[kernels]") {
  std::mt19937 rng(21);
  const int N = 3, C = 6;
  auto inp = random_buf<double>(N * C, rng, -2, 2), w = random_buf<double>(C, rng);
  auto R = random_buf<double>(N * C, rng);
  Buf<double> out("out", N * C), rstd("rstd", N), dinp("dinp", N * C), dw("dw", C);
  auto loss = [&] {
    rmsnorm_forward<double>(out, rstd, inp, w, N, C);
    return dot(out, R);
  };
  loss();
  rmsnorm_backward<double>(dinp, dw, R, inp, w, rstd, N, C);
  check_gradient("inp", inp, dinp, loss);
  check_gradient("weight", w, dw, loss);
  check_accumulates({dinp, dw}, [&] { rmsnorm_backward<double>(dinp, dw, R, inp, w, rstd, N, C); });
}
