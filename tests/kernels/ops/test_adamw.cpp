#include <catch2/catch.hpp>

#include "kernels/ops/adamw.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEST_CASE("adamw reproduces a hand-computed two-step example", "[kernels]") {
  // lr 0.1, betas (0.9, 0.999), eps 1e-8, weight decay 0.01, grad_scale 2.
  // Element 0, p = 1, grads 0.5 then -0.25:
  //   step 1: g = 1, m = 0.1, v = 0.001, mhat = vhat = 1,
  //           p = 1 - 0.1 (1/(1+1e-8) + 0.01 * 1) = 0.899000001
  //   step 2: g = -0.5, m = 0.04, v = 0.001249, mhat = 0.04/0.19, vhat = 0.001249/0.001999,
  //           p = 0.899000001 - 0.1 (mhat/(sqrt(vhat)+1e-8) + 0.01 p) = 0.8714672973699031
  // Element 1, p = -0.5, grads 0 then 1.5 (a zero first moment must not give NaN):
  //   step 1: m = v = 0, p = -0.5 - 0.1 * 0.01 * (-0.5) = -0.4995
  //   step 2: g = 3, m = 0.3, v = 0.009, p = -0.5734141820059965
  Buf<double> p("p", 2), m("m", 2), v("v", 2), g("g", 2);
  p(0) = 1.0;
  p(1) = -0.5;
  g(0) = 0.5;
  g(1) = 0.0;
  adamw_update<double>(p, m, v, g, 2, 0.1, 0.9, 0.999, 1e-8, 0.01, 1, 2.0);
  REQUIRE(p(0) == Approx(0.899000001).epsilon(1e-13));
  REQUIRE(p(1) == Approx(-0.4995).epsilon(1e-13));
  REQUIRE(m(0) == Approx(0.1).epsilon(1e-13));
  REQUIRE(v(0) == Approx(0.001).epsilon(1e-13));
  g(0) = -0.25;
  g(1) = 1.5;
  adamw_update<double>(p, m, v, g, 2, 0.1, 0.9, 0.999, 1e-8, 0.01, 2, 2.0);
  REQUIRE(p(0) == Approx(0.8714672973699031).epsilon(1e-13));
  REQUIRE(p(1) == Approx(-0.5734141820059965).epsilon(1e-13));
  REQUIRE(m(0) == Approx(0.04).epsilon(1e-13));
  REQUIRE(v(0) == Approx(0.001249).epsilon(1e-13));
  REQUIRE(m(1) == Approx(0.3).epsilon(1e-13));
  REQUIRE(v(1) == Approx(0.009).epsilon(1e-13));
}

TEMPLATE_TEST_CASE("adamw matches the reference", "[kernels]", float, double) {
  using T = TestType;
  std::mt19937 rng(14);
  const int64_t n = 1001;
  auto p = random_buf<T>(n, rng), m = random_buf<T>(n, rng, -0.1, 0.1), v = random_buf<T>(n, rng, 0, 0.01),
       g = random_buf<T>(n, rng);
  auto p_r = copy_of<T>(p), m_r = copy_of<T>(m), v_r = copy_of<T>(v);
  for (int step = 1; step <= 3; ++step) {
    adamw_update<T>(p, m, v, g, n, T(1e-3), T(0.9), T(0.95), T(1e-8), T(0.1), step, T(0.5));
    adamw_update_reference<T>(p_r, m_r, v_r, g, n, T(1e-3), T(0.9), T(0.95), T(1e-8), T(0.1), step, T(0.5));
  }
  require_close<T>(p, p_r, ref_tol<T>(), "param");
  require_close<T>(m, m_r, ref_tol<T>(), "m");
  require_close<T>(v, v_r, ref_tol<T>(), "v");
}
