// Non-finite numbers in training (src/run/non_finite.hpp): the stopping line and
// the check that keeps NaN/inf out of checkpoints.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "src/run/non_finite.hpp"

using namespace zeropp;

TEST_CASE("the stopping line names the step, both values and the last good checkpoint", "[non-finite]") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  CHECK(non_finite_message(7, -nan, inf, "runs/x/checkpoints/step_00000006.h5") ==
        "step 7: loss is nan (gradient norm inf) - stopping; last good checkpoint: "
        "runs/x/checkpoints/step_00000006.h5");
  CHECK(non_finite_message(1, 2.5, nan, "") ==
        "step 1: loss is 2.5 (gradient norm nan) - stopping; last good checkpoint: none");
}

TEST_CASE("first_non_finite finds NaN and inf by tensor and flat index, and nothing in finite data",
          "[non-finite]") {
  std::vector<float> a(10, 1.0f), b(6, -2.0f);
  ShardGroups g = {{"model", {{"a", {4, 5}, 10, 20, a.data()}}},
                   {"optimizer/exp_avg", {{"b", {6}, 0, 6, b.data()}}}};
  CHECK_FALSE(first_non_finite(g));
  b[4] = std::numeric_limits<float>::infinity();
  CHECK(first_non_finite(g).value() == "/optimizer/exp_avg/b[4]");
  a[3] = std::nanf("");
  CHECK(first_non_finite(g).value() == "/model/a[13]");  // flat index = begin + offset
  a[3] = std::numeric_limits<float>::max();              // large but finite
  b[4] = -std::numeric_limits<float>::max();
  CHECK_FALSE(first_non_finite(g));
}
