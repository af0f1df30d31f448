// `bench step`'s GEMM ratio paired per step (src/bench/paired_ratio.hpp).
#include <catch2/catch.hpp>
#include <vector>

#include "src/base/errors.hpp"
#include "src/bench/paired_ratio.hpp"

using namespace zeropp;
using Catch::Matchers::Contains;

TEST_CASE("paired ratio: each step over the GEMM mix timed after it, median and spread", "[paired-ratio]") {
  // s = 100, 50, 25 GFLOP/s; r = 200, 50, 200 GFLOP/s; ratios 0.5, 1, 0.125.
  const PairedRatio p = paired_ratio({1, 2, 4}, {1, 4, 1}, 100e9, 200e9);
  CHECK(p.median == Approx(0.5));
  CHECK(p.min == Approx(0.125));
  CHECK(p.max == Approx(1.0));
  CHECK(p.reference_gflops == Approx(200));
  // Pairs, not medians: median(s) / median(r) would be 50 / 200 = 0.25.
  CHECK(p.median != Approx(0.25));
}

TEST_CASE("paired ratio: a host whose speed drifts between steps gives the same ratio every step",
          "[paired-ratio]") {
  // The host runs at speed f_i during step i and the mix after it: both take 1/f_i as long.
  const std::vector<double> f = {1.0, 1.5, 0.7, 1.2};
  std::vector<double> step, mix;
  for (double x : f) {
    step.push_back(0.4 / x);
    mix.push_back(0.3 / x);
  }
  const PairedRatio p = paired_ratio(step, mix, 80e9, 90e9);  // s = 200 f, r = 300 f
  CHECK(p.median == Approx(2.0 / 3));
  CHECK(p.min == Approx(2.0 / 3));
  CHECK(p.max == Approx(2.0 / 3));
  CHECK(p.reference_gflops == Approx(300 * (1.0 + 1.2) / 2));  // median of an even count
}

TEST_CASE("paired ratio: refuses unpaired, empty or non-positive input with one clear line",
          "[paired-ratio]") {
  CHECK_THROWS_WITH(paired_ratio({}, {}, 1, 1), Contains("0 step times and 0 GEMM mix times"));
  CHECK_THROWS_WITH(paired_ratio({1, 2}, {1}, 1, 1), Contains("2 step times and 1 GEMM mix times"));
  CHECK_THROWS_WITH(paired_ratio({1, 0}, {1, 1}, 1, 1), Contains("step 1 has a non-positive time"));
  CHECK_THROWS_WITH(paired_ratio({1}, {-1}, 1, 1), Contains("step 0 has a non-positive time"));
  CHECK_THROWS_WITH(paired_ratio({1}, {1}, 0, 1), Contains("FLOP counts must be positive"));
  CHECK_THROWS_AS(paired_ratio({1}, {1}, 1, 0), Error);
}

TEST_CASE("median of odd and even counts, unsorted input", "[paired-ratio]") {
  CHECK(median({3, 1, 2}) == 2);
  CHECK(median({4, 1, 3, 2}) == 2.5);
  CHECK(median({7}) == 7);
  CHECK_THROWS_AS(median({}), Error);
}
