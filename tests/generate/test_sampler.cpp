// The sampling rules (src/generate/sampler.hpp): pure functions of logits and a coin.
#include <catch2/catch.hpp>
#include <cmath>

#include "src/base/errors.hpp"
#include "src/generate/sampler.hpp"

using namespace zeropp;

namespace {
std::vector<float> log_of(const std::vector<double>& p) {
  std::vector<float> l;
  for (double x : p) l.push_back(float(std::log(x)));
  return l;
}
}  // namespace

TEST_CASE("sampling: a coin picks through the cumulative distribution; greedy takes the first maximum",
          "[model]") {
  CHECK(sample_index({0.0, 1.0, 0.0}, 0.5) == 1);
  CHECK(sample_index({0.25, 0.25, 0.5}, 0.3) == 1);
  CHECK(sample_index({0.25, 0.25, 0.49, 0.0}, 0.999) == 2);  // cdf short of 1: the last token with mass
  const std::vector<float> l = {0.5f, 2.0f, -1.0f, 2.0f};
  CHECK(greedy_token(l.data(), 4) == 1);
  SamplingRule greedy;
  greedy.temperature = 0;
  CHECK(next_token(l.data(), 4, greedy, 0.99) == 1);  // the coin plays no part
  CHECK(decode_bytes({65, 7, 300, 10}) == "A?<300>\n");
}

TEST_CASE("sampling: temperature, top-k and top-p cut and renormalise the softmax", "[model]") {
  const std::vector<double> p = {0.05, 0.5, 0.15, 0.3};
  const std::vector<float> l = log_of(p);
  SamplingRule r;
  auto q = sampling_probs(l.data(), 4, r);
  for (size_t i = 0; i < 4; ++i) CHECK(q[i] == Approx(p[i]).epsilon(1e-6));
  r.temperature = 0.5;  // p^2, renormalised
  q = sampling_probs(l.data(), 4, r);
  double z = 0;
  for (double x : p) z += x * x;
  for (size_t i = 0; i < 4; ++i) CHECK(q[i] == Approx(p[i] * p[i] / z).epsilon(1e-6));
  r.temperature = 1;
  r.top_k = 2;  // tokens 1 and 3
  q = sampling_probs(l.data(), 4, r);
  CHECK(q[0] == 0);
  CHECK(q[2] == 0);
  CHECK(q[1] == Approx(0.5 / 0.8).epsilon(1e-6));
  CHECK(q[3] == Approx(0.3 / 0.8).epsilon(1e-6));
  r.top_k = 0;
  r.top_p = 0.79;  // 0.5 + 0.3 reaches it: tokens 1 and 3
  q = sampling_probs(l.data(), 4, r);
  CHECK(q[0] == 0);
  CHECK(q[2] == 0);
  CHECK(q[1] == Approx(0.5 / 0.8).epsilon(1e-6));
  r.top_p = 0.81;  // needs token 2 too
  q = sampling_probs(l.data(), 4, r);
  CHECK(q[0] == 0);
  CHECK(q[2] == Approx(0.15 / 0.95).epsilon(1e-6));
  r.top_p = 0.1;  // the most probable alone
  q = sampling_probs(l.data(), 4, r);
  CHECK(q == std::vector<double>{0, 1, 0, 0});
  r.top_p = 0.9;
  r.top_k = 1;  // top-k first
  CHECK(sampling_probs(l.data(), 4, r) == std::vector<double>{0, 1, 0, 0});
}

TEST_CASE("sampling: bad rules are refused naming the option", "[model]") {
  SamplingRule r;
  r.temperature = -0.5;
  CHECK_THROWS_WITH(check_sampling_rule(r), Catch::StartsWith("--temperature -0.5"));
  r = SamplingRule{};
  r.top_p = 0;
  CHECK_THROWS_WITH(check_sampling_rule(r), Catch::StartsWith("--top-p 0"));
  r.top_p = 1.5;
  CHECK_THROWS_WITH(check_sampling_rule(r), Catch::Contains("(0, 1]"));
  r = SamplingRule{};
  r.top_k = -1;
  CHECK_THROWS_WITH(check_sampling_rule(r), Catch::StartsWith("--top-k -1"));
  CHECK_NOTHROW(check_sampling_rule(SamplingRule{}));
}

// A one-hot distribution leaves nothing to chance; these draw from a spread one,
// so the seed decides every token.
TEST_CASE("the seed decides the draws, whose frequencies match the probabilities", "[model]") {
  const std::vector<double> probs = {0.1, 0.2, 0.3, 0.4};
  const std::vector<float> l = log_of(probs);
  const int n = 20000;
  const auto draw = [&](uint64_t seed) {
    CoinStream coins(seed);
    std::vector<int> t;
    for (int i = 0; i < n; ++i) t.push_back(next_token(l.data(), 4, SamplingRule{}, coins.next()));
    return t;
  };
  const auto a = draw(9), b = draw(9), c = draw(8);
  int same_ab = 0, same = 0;
  for (int i = 0; i < n; ++i) {
    same_ab += a[size_t(i)] == b[size_t(i)];
    same += a[size_t(i)] == c[size_t(i)];
  }
  CHECK(same_ab == n);
  // Independent streams agree where both draw the same token: sum p^2 = 0.3 of the time.
  CHECK(std::abs(double(same) / n - 0.3) < 0.02);  // 6 standard deviations of a binomial(n, 0.3)
  std::vector<int> count(probs.size(), 0);
  for (int t : a) {
    REQUIRE(t >= 0);
    REQUIRE(t < int(probs.size()));
    ++count[size_t(t)];
  }
  for (size_t k = 0; k < probs.size(); ++k) {
    const double p = probs[k], sigma = std::sqrt(p * (1 - p) / n);
    INFO("token " << k << ": " << count[k] << " of " << n << ", p = " << p);
    CHECK(std::abs(count[k] / double(n) - p) < 5 * sigma);  // 5 sigma: ~1e-6 chance per token
  }
}
