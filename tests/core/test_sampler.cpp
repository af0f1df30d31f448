#include <catch2/catch.hpp>
#include <cmath>

#include "src/app/sampler.hpp"

using namespace zeropp;

TEST_CASE("sampling draws from the distribution, deterministically per seed", "[model]") {
  CHECK(sample_index({0.0f, 1.0f, 0.0f}, 0.5) == 1);
  CHECK(sample_index({0.25f, 0.25f, 0.5f}, 0.3) == 1);
  CHECK(sample_index({0.25f, 0.25f, 0.49f}, 0.999) == 2);  // cdf short of 1: last index
  const NextTokenProbs next = [](const std::vector<int32_t>& ctx) {
    std::vector<float> p(256, 0.0f);
    p[size_t('a' + int(ctx.size()) % 3)] = 1.0f;
    return p;
  };
  const auto toks = sample_tokens(next, "xy", 4, 3, 1);
  CHECK(decode_bytes(toks) == "xycaaa");  // the context is capped at 3 tokens
  CHECK(decode_bytes(sample_tokens(next, "xy", 4, 8, 1)) == "xycabc");
  CHECK(decode_bytes({65, 7, 300, 10}) == "A?<300>\n");
}

// A one-hot distribution leaves nothing to chance; these draw from a spread one,
// so the seed decides every token.
TEST_CASE("the seed decides the draws, whose frequencies match the probabilities", "[model]") {
  const std::vector<float> probs = {0.1f, 0.2f, 0.3f, 0.4f};
  const NextTokenProbs next = [&](const std::vector<int32_t>&) { return probs; };
  const int n = 20000;
  const auto draw = [&](uint64_t seed) {
    auto t = sample_tokens(next, "x", n, 4, seed);
    return std::vector<int32_t>(t.begin() + 1, t.end());  // without the prompt
  };
  const auto a = draw(9), b = draw(9), c = draw(10);
  int same_ab = 0, same = 0;
  for (int i = 0; i < n; ++i) {
    same_ab += a[size_t(i)] == b[size_t(i)];
    same += a[size_t(i)] == c[size_t(i)];
  }
  CHECK(same_ab == n);
  // Independent streams agree where both draw the same token: sum p^2 = 0.3 of the time.
  CHECK(std::abs(double(same) / n - 0.3) < 0.02);  // 6 standard deviations of a binomial(n, 0.3)
  std::vector<int> count(probs.size(), 0);
  for (int32_t t : a) {
    REQUIRE(t >= 0);
    REQUIRE(t < int32_t(probs.size()));
    ++count[size_t(t)];
  }
  for (size_t k = 0; k < probs.size(); ++k) {
    const double p = probs[k], sigma = std::sqrt(p * (1 - p) / n);
    INFO("token " << k << ": " << count[k] << " of " << n << ", p = " << p);
    CHECK(std::abs(count[k] / double(n) - p) < 5 * sigma);  // 5 sigma: ~1e-6 chance per token
  }
}
