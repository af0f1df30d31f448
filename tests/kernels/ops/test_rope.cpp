#include <catch2/catch.hpp>

#include "kernels/ops/rope.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEMPLATE_TEST_CASE("rope matches the reference", "[kernels]", float, double) {
  using T = TestType;
  std::mt19937 rng(40);
  for (auto [B, Tn, C, NH] : {std::array{1, 1, 2, 1}, std::array{2, 5, 8, 2}, std::array{1, 33, 24, 3}}) {
    const int64_t n = int64_t(B) * Tn * 3 * C;
    auto inp = random_buf<T>(n, rng);
    Buf<T> out("out", n), out_r("out_r", n);
    rope_forward<T>(out, inp, B, Tn, C, NH);
    rope_forward_reference<T>(out_r, inp, B, Tn, C, NH);
    require_close<T>(out, out_r, ref_tol<T>(), "out");
    auto dout = random_buf<T>(n, rng), dinp = random_buf<T>(n, rng);
    auto dinp_r = copy_of<T>(dinp);
    rope_backward<T>(dinp, dout, B, Tn, C, NH);
    rope_backward_reference<T>(dinp_r, dout, B, Tn, C, NH);
    require_close<T>(dinp, dinp_r, ref_tol<T>(), "dinp");
  }
}

TEST_CASE("rope rotates pair i of position t by t / 10000^(2i/hs) and leaves v alone", "[kernels]") {
  // One head of size 4 at position 1 of two: q = (1, 0, 0, 1), k = (2, 0, 0, 0), v copied.
  const int C = 4, Tn = 2;
  Buf<double> inp("inp", Tn * 3 * C), out("out", Tn * 3 * C);
  const int row = 3 * C;  // position 1
  inp(row + 0) = 1, inp(row + 3) = 1, inp(row + 4) = 2, inp(row + 8) = 7;
  rope_forward<double>(out, inp, 1, Tn, C, 1);
  const double t0 = 1.0, t1 = 1.0 / 100.0;  // 10000^(-0/4), 10000^(-2/4)
  CHECK(out(row + 0) == Approx(std::cos(t0)).epsilon(1e-14));
  CHECK(out(row + 1) == Approx(std::sin(t0)).epsilon(1e-14));
  CHECK(out(row + 2) == Approx(-std::sin(t1)).epsilon(1e-14));
  CHECK(out(row + 3) == Approx(std::cos(t1)).epsilon(1e-14));
  CHECK(out(row + 4) == Approx(2 * std::cos(t0)).epsilon(1e-14));
  CHECK(out(row + 8) == 7);
  CHECK(out(0) == 0);  // position 0: no rotation
}

TEST_CASE("rope backward matches finite differences", "[kernels]") {
  std::mt19937 rng(41);
  const int B = 2, Tn = 3, C = 4, NH = 2;
  const int64_t n = int64_t(B) * Tn * 3 * C;
  auto inp = random_buf<double>(n, rng), R = random_buf<double>(n, rng);
  Buf<double> out("out", n), dinp("dinp", n);
  auto loss = [&] {
    rope_forward<double>(out, inp, B, Tn, C, NH);
    return dot(out, R);
  };
  rope_backward<double>(dinp, R, B, Tn, C, NH);
  check_gradient("inp", inp, dinp, loss);
  check_accumulates({dinp}, [&] { rope_backward<double>(dinp, R, B, Tn, C, NH); });
}

TEMPLATE_TEST_CASE("rope at an offset rotates rows as the same rows of a longer sequence", "[kernels]", float,
                   double) {
  using T = TestType;
  std::mt19937 rng(41);
  const int C = 12, NH = 3, Tlong = 9, pos0 = 6, Tn = 3;
  const int64_t row = 3 * C;
  auto inp = random_buf<T>(Tlong * row, rng);
  Buf<T> full("full", size_t(Tlong * row)), tail("tail", size_t(Tn * row)),
      tail_r("tail_r", size_t(Tn * row));
  rope_forward<T>(full, inp, 1, Tlong, C, NH);
  const CVec<T> last(inp.data() + pos0 * row, Tn * row);
  rope_forward_at<T>(tail, last, 1, Tn, C, NH, pos0);
  rope_forward_at_reference<T>(tail_r, last, 1, Tn, C, NH, pos0);
  require_close<T>(tail, tail_r, ref_tol<T>(), "reference");
  for (int64_t i = 0; i < Tn * row; ++i) REQUIRE(tail(i) == full(pos0 * row + i));
}
