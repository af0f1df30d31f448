#include <catch2/catch.hpp>

#include "kernels/ops/bias_gelu.hpp"
#include "kernels/ops/gelu.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEMPLATE_TEST_CASE("bias + GELU backward (fused) matches the unfused composition", "[kernels][simd]", float,
                   double) {
  using T = TestType;
  // OC = 130 spans three column chunks, the last one partial.
  const std::array<std::array<int, 2>, 3> shapes{{{7, 13}, {1, 1}, {5, 130}}};
  std::mt19937 rng(43);
  for (const auto& [N, OC] : shapes) {
    INFO("N=" << N << " OC=" << OC);
    const int64_t n = int64_t(N) * OC;
    auto pre = random_buf<T>(n, rng, -4, 4);
    auto dout = random_buf<T>(n, rng), dpre = random_buf<T>(n, rng), dbias = random_buf<T>(OC, rng);
    auto dpre_r = copy_of<T>(dpre), dbias_r = copy_of<T>(dbias);
    bias_gelu_backward<T>(dpre, dbias, pre, dout, N, OC);
    bias_gelu_backward_reference<T>(dpre_r, dbias_r, pre, dout, N, OC);
    require_close<T>(dpre, dpre_r, ref_tol<T>(), "dpre");
    require_close<T>(dbias, dbias_r, 10 * ref_tol<T>(), "dbias");
  }
}

TEST_CASE("bias + GELU backward matches finite differences and accumulates", "[kernels]") {
  std::mt19937 rng(44);
  const int N = 3, OC = 70;
  const int64_t n = int64_t(N) * OC;
  auto x = random_buf<double>(n, rng, -3, 3), bias = random_buf<double>(OC, rng),
       R = random_buf<double>(n, rng);
  Buf<double> pre("pre", n), out("out", n), dx("dx", n), dbias("dbias", OC);
  // L = sum(gelu(x + bias) ⊙ R); pre = x + bias as the fc GEMM leaves it (its C holds the bias rows).
  auto loss = [&] {
    for (int64_t i = 0; i < n; ++i) pre(i) = x(i) + bias(i % OC);
    gelu_forward<double>(out, pre, n);
    return dot(out, R);
  };
  loss();
  bias_gelu_backward<double>(dx, dbias, pre, R, N, OC);
  check_gradient("x", x, dx, loss);
  check_gradient("bias", bias, dbias, loss);
  loss();
  check_accumulates({dx, dbias}, [&] { bias_gelu_backward<double>(dx, dbias, pre, R, N, OC); });
}
