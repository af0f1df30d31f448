#include <catch2/catch.hpp>

#include "kernels/ops/gelu.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEMPLATE_TEST_CASE("gelu matches the reference", "[kernels][simd]", float, double) {
  using T = TestType;
  std::mt19937 rng(10);
  for (int64_t n : {1, 13, 1000}) {
    auto inp = random_buf<T>(n, rng, -5, 5);
    Buf<T> out("out", n), out_r("out_r", n);
    gelu_forward<T>(out, inp, n);
    gelu_forward_reference<T>(out_r, inp, n);
    require_close<T>(out, out_r, ref_tol<T>(), "out");

    auto dout = random_buf<T>(n, rng), dinp = random_buf<T>(n, rng);
    auto dinp_r = copy_of<T>(dinp);
    gelu_backward<T>(dinp, inp, dout, n);
    gelu_backward_reference<T>(dinp_r, inp, dout, n);
    require_close<T>(dinp, dinp_r, ref_tol<T>(), "dinp");
  }
}

TEST_CASE("gelu is the tanh approximation", "[kernels]") {
  // Values of 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3))), as torch's gelu(approximate="tanh").
  Buf<double> inp("inp", 3), out("out", 3);
  inp(0) = 1.0;
  inp(1) = -1.0;
  inp(2) = 2.5;
  gelu_forward<double>(out, inp, 3);
  REQUIRE(out(0) == Approx(0.8411919906082768).epsilon(1e-14));
  REQUIRE(out(1) == Approx(-0.15880800939172324).epsilon(1e-14));
  REQUIRE(out(2) == Approx(2.484915733910001).epsilon(1e-14));
}

TEST_CASE("gelu backward matches finite differences", "[kernels]") {
  std::mt19937 rng(11);
  const int64_t n = 17;
  auto inp = random_buf<double>(n, rng, -4, 4), R = random_buf<double>(n, rng);
  Buf<double> out("out", n), dinp("dinp", n);
  auto loss = [&] {
    gelu_forward<double>(out, inp, n);
    return dot(out, R);
  };
  gelu_backward<double>(dinp, inp, R, n);
  check_gradient("inp", inp, dinp, loss);
  check_accumulates({dinp}, [&] { gelu_backward<double>(dinp, inp, R, n); });
}

TEST_CASE("gelu saturates without NaN for large |x|", "[kernels][simd]") {
  // exp(2u) overflows to inf for large positive x and underflows to 0 for large negative x.
  Buf<float> inp("inp", 2), out("out", 2), dinp("dinp", 2), dout("dout", 2);
  inp(0) = 60;
  inp(1) = -60;
  dout(0) = dout(1) = 1;
  gelu_forward<float>(out, inp, 2);
  gelu_backward<float>(dinp, inp, dout, 2);
  REQUIRE(out(0) == 60.0f);
  REQUIRE(out(1) == 0.0f);
  REQUIRE(dinp(0) == 1.0f);
  REQUIRE(dinp(1) == 0.0f);
}
