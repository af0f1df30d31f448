#include <catch2/catch.hpp>

#include "kernels/ops/sum_squares.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEMPLATE_TEST_CASE("sum_squares matches the reference and a hand value", "[kernels][simd]", float, double) {
  using T = TestType;
  Buf<T> x("x", 4);
  x(0) = 1;
  x(1) = -2;
  x(2) = 3;
  x(3) = 0.5;
  REQUIRE(sum_squares<T>(x, 4) == 14.25);
  REQUIRE(sum_squares<T>(x, 3) == 14.0);  // only the first n entries count

  std::mt19937 rng(15);
  auto y = random_buf<T>(100003, rng);
  REQUIRE(sum_squares<T>(y, y.size()) == Approx(sum_squares_reference<T>(y, y.size())).epsilon(1e-12));
}
