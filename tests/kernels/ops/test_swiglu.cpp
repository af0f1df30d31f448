#include <catch2/catch.hpp>

#include "kernels/ops/swiglu.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEMPLATE_TEST_CASE("swiglu matches the reference", "[kernels]", float, double) {
  using T = TestType;
  std::mt19937 rng(30);
  for (auto [N, F] : {std::pair{1, 1}, std::pair{4, 13}, std::pair{7, 100}}) {
    auto inp = random_buf<T>(int64_t(N) * 2 * F, rng, -5, 5);
    Buf<T> out("out", int64_t(N) * F), out_r("out_r", int64_t(N) * F);
    swiglu_forward<T>(out, inp, N, F);
    swiglu_forward_reference<T>(out_r, inp, N, F);
    require_close<T>(out, out_r, ref_tol<T>(), "out");
    auto dout = random_buf<T>(int64_t(N) * F, rng), dinp = random_buf<T>(int64_t(N) * 2 * F, rng);
    auto dinp_r = copy_of<T>(dinp);
    swiglu_backward<T>(dinp, inp, dout, N, F);
    swiglu_backward_reference<T>(dinp_r, inp, dout, N, F);
    require_close<T>(dinp, dinp_r, ref_tol<T>(), "dinp");
  }
}

TEST_CASE("swiglu is silu(gate) times value", "[kernels]") {
  Buf<double> inp("inp", 2), out("out", 1);
  inp(0) = 1.5;  // gate
  inp(1) = -2;   // value
  swiglu_forward<double>(out, inp, 1, 1);
  REQUIRE(out(0) == Approx(1.5 / (1 + std::exp(-1.5)) * -2).epsilon(1e-14));
}

TEST_CASE("swiglu backward matches finite differences", "[kernels]") {
  std::mt19937 rng(31);
  const int N = 3, F = 5;
  auto inp = random_buf<double>(N * 2 * F, rng, -4, 4), R = random_buf<double>(N * F, rng);
  Buf<double> out("out", N * F), dinp("dinp", N * 2 * F);
  auto loss = [&] {
    swiglu_forward<double>(out, inp, N, F);
    return dot(out, R);
  };
  swiglu_backward<double>(dinp, inp, R, N, F);
  check_gradient("inp", inp, dinp, loss);
  check_accumulates({dinp}, [&] { swiglu_backward<double>(dinp, inp, R, N, F); });
}
