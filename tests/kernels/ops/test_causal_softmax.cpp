#include <catch2/catch.hpp>
#include <cmath>

#include "kernels/ops/causal_softmax.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

namespace {
// Entries t < t2 < causal_row_end(t, Tn) of [rows, Tn] score matrices must be
// exact zeros (attention's products read them); the ones from there on are
// unspecified: cleared here, where the reference twins write zeros.
template <class T>
void require_masked_zeros(Vec<T> s, int64_t rows, int Tn, const char* what) {
  for (int64_t r = 0; r < rows; ++r) {
    const int t = int(r % Tn), end = causal_row_end(t, Tn);
    for (int t2 = t + 1; t2 < end; ++t2) {
      INFO(what << " row " << r << " column " << t2);
      REQUIRE(s(r * Tn + t2) == T(0));
    }
    for (int t2 = end; t2 < Tn; ++t2) s(r * Tn + t2) = T(0);
  }
}
}  // namespace

TEMPLATE_TEST_CASE("causal softmax (fused mask + softmax) matches the unfused composition", "[kernels][simd]",
                   float, double) {
  using T = TestType;
  std::mt19937 rng(40);
  // Tn 1 (one visible score), 7 and 21 (lane tails), 64 (whole lanes), 150 (three row blocks, entries
  // left unwritten); scores up to ±30 so that exponentials span many binades.
  for (auto [rows_per_t, Tn] : {std::array<int, 2>{3, 1}, {2, 7}, {2, 21}, {1, 64}, {1, 150}}) {
    INFO("Tn=" << Tn);
    const int64_t rows = int64_t(rows_per_t) * Tn, n = rows * Tn;
    auto pre = random_buf<T>(n, rng, -30, 30);
    // Masked scores need not be finite: the fused kernel must not read them.
    for (int64_t r = 0; r < rows; ++r)
      for (int t2 = int(r % Tn) + 1; t2 < Tn; ++t2) pre(r * Tn + t2) = std::nan("");
    // Garbage: the forward overwrites every entry up to the row's block end (exact zeros past t).
    auto att = random_buf<T>(n, rng, 50, 60);
    Buf<T> att_r("att_r", n);
    causal_softmax_forward<T>(att, pre, rows, Tn);
    causal_softmax_forward_reference<T>(att_r, pre, rows, Tn);
    require_masked_zeros<T>(att, rows, Tn, "att");
    require_close<T>(att, att_r, ref_tol<T>(), "att");

    auto datt = random_buf<T>(n, rng);
    auto dpre = random_buf<T>(n, rng, 50, 60);
    Buf<T> dpre_r("dpre_r", n);
    causal_softmax_backward<T>(dpre, att, datt, rows, Tn, T(0.25));
    causal_softmax_backward_reference<T>(dpre_r, att, datt, rows, Tn, T(0.25));
    require_masked_zeros<T>(dpre, rows, Tn, "dpre");
    require_close<T>(dpre, dpre_r, ref_tol<T>(), "dpre");
  }
}

TEST_CASE("causal softmax rows sum to 1 and its backward matches finite differences", "[kernels]") {
  std::mt19937 rng(41);
  const int Tn = 11;
  const int64_t rows = 2 * Tn, n = rows * Tn;
  auto pre = random_buf<double>(n, rng, -3, 3), R = random_buf<double>(n, rng);
  Buf<double> att("att", n), dpre("dpre", n);
  causal_softmax_forward<double>(att, pre, rows, Tn);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int t2 = 0; t2 < Tn; ++t2) sum += att(r * Tn + t2);
    REQUIRE(sum == Approx(1.0).epsilon(1e-14));
  }
  // L = sum(att ⊙ R) as a function of the scores; scale 1: dL/dpre itself.
  causal_softmax_backward<double>(dpre, att, R, rows, Tn, 1.0);
  check_gradient("pre", pre, dpre, [&] {
    causal_softmax_forward<double>(att, pre, rows, Tn);
    return dot(att, R);
  });
}
