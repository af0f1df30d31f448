// The pieces of `zeropp rlhf` that are arithmetic: the reward rule, the
// returns and advantages of the policy gradient, the sampler over a batch and
// the log-probabilities it scores (src/app/reward.hpp, policy_gradient.hpp,
// rollout.hpp). The loop itself: tests/cli/rlhf.sh.
#include <catch2/catch.hpp>
#include <cmath>

#include "src/app/policy_gradient.hpp"
#include "src/app/reward.hpp"
#include "src/app/rollout.hpp"

using namespace zeropp;

TEST_CASE("the word reward counts non-overlapping occurrences, clipped", "[rlhf]") {
  CHECK(word_reward("and the LORD said", "LORD", 4) == 1);
  CHECK(word_reward("LORDLORD LORD", "LORD", 4) == 3);
  CHECK(word_reward("LORD LORD LORD LORD LORD LORD", "LORD", 4) == 4);  // clipped
  CHECK(word_reward("the Lord, lord, LOR D", "LORD", 4) == 0);          // case and bytes exact
  CHECK(word_reward("aaaa", "aa", 9) == 2);                             // non-overlapping
  CHECK(word_reward("", "LORD", 4) == 0);
}

TEST_CASE("returns fold the KL penalty into the per-token reward", "[rlhf]") {
  // Two sequences of 3 completion tokens; rewards 2 and 0; beta 0.5.
  const std::vector<double> R = {2, 0};
  const std::vector<double> lp = {-1, -2, -3, -1, -1, -1};
  const std::vector<double> lr = {-1.5, -2, -2, -1, -3, -1};  // k = 0.5, 0, -1 | 0, 2, 0
  const std::vector<double> G = token_returns(R, lp, lr, 0.5, 2, 3);
  // G_t = R - 0.5 * sum_{s >= t} k_s
  const std::vector<double> want = {2 - 0.5 * (0.5 + 0 - 1), 2 - 0.5 * (0 - 1), 2 - 0.5 * (-1),
                                    0 - 0.5 * (0 + 2 + 0),   0 - 0.5 * (2 + 0), 0 - 0.5 * 0};
  for (size_t i = 0; i < G.size(); ++i) CHECK(G[i] == Approx(want[i]).margin(1e-15));
  const std::vector<double> s = column_sums(G, 2, 3);
  CHECK(s == std::vector<double>{G[0] + G[3], G[1] + G[4], G[2] + G[5]});
  // Weights over 2 rows of Tp + Tc - 1 = 2 + 3 - 1 = 4 targets: the prompt's first target
  // weighs 0; completion token t is the target at Tp - 1 + t.
  const std::vector<double> base = {1, 2, 3};
  const std::vector<float> w = advantage_weights(G, base, 2, 2, 3);
  const std::vector<float> want_w = {0, float(G[0] - 1), float(G[1] - 2), float(G[2] - 3),
                                     0, float(G[3] - 1), float(G[4] - 2), float(G[5] - 3)};
  CHECK(w == want_w);
}

TEST_CASE("batched sampling continues each row and scores what it drew", "[rlhf]") {
  // A "model" over V = 4 that always predicts (last token + 1) mod 4, except
  // that row 1 is split evenly between tokens 0 and 2.
  const int V = 4, B = 2, Tp = 2, Tc = 3;
  std::vector<float> buf;
  int calls = 0;
  const PrefixProbs probs = [&](const std::vector<int32_t>& tok, int b, int tn) {
    ++calls;
    REQUIRE(b == B);
    buf.assign(size_t(b) * tn * V, 0.0f);
    for (int r = 0; r < b; ++r)
      for (int i = 0; i < tn; ++i) {
        float* p = buf.data() + (size_t(r) * tn + i) * V;
        if (r == 1) {
          p[0] = p[2] = 0.5f;
        } else {
          p[(tok[size_t(r) * tn + i] + 1) % V] = 1.0f;
        }
      }
    return CVec<float>(buf.data(), int64_t(buf.size()));
  };
  const std::vector<int32_t> prompts = {0, 1, 3, 3};
  const std::vector<int32_t> s = sample_completions(probs, prompts, B, Tp, Tc, 1.0, 42);
  CHECK(calls == Tc);
  REQUIRE(s.size() == size_t(B) * (Tp + Tc));
  CHECK(std::vector<int32_t>(s.begin(), s.begin() + 5) == std::vector<int32_t>{0, 1, 2, 3, 0});
  for (int t = 2; t < 5; ++t) CHECK((s[size_t(5 + t)] == 0 || s[size_t(5 + t)] == 2));
  CHECK(sample_completions(probs, prompts, B, Tp, Tc, 1.0, 42) == s);  // the seed decides
  // The log-probabilities of the drawn tokens under the full forward: 0 for row 0, log 0.5 for row 1.
  std::vector<int32_t> inputs(size_t(B) * 4);
  for (int r = 0; r < B; ++r)
    for (int i = 0; i < 4; ++i) inputs[size_t(r * 4 + i)] = s[size_t(r * 5 + i)];
  const std::vector<double> lp = completion_log_probs(probs(inputs, B, 4), s, B, Tp, Tc);
  for (int t = 0; t < Tc; ++t) {
    CHECK(lp[size_t(t)] == 0.0);
    CHECK(lp[size_t(Tc + t)] == Approx(std::log(0.5)));
  }
  // Temperature sharpens: at 0.02 a 0.6 / 0.4 split draws the likelier token practically always.
  const PrefixProbs skew = [&](const std::vector<int32_t>&, int b, int tn) {
    buf.assign(size_t(b) * tn * V, 0.0f);
    for (int i = 0; i < b * tn; ++i) {
      buf[size_t(i) * V + 1] = 0.6f;
      buf[size_t(i) * V + 3] = 0.4f;
    }
    return CVec<float>(buf.data(), int64_t(buf.size()));
  };
  int ones = 0;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const auto c = sample_completions(skew, prompts, B, Tp, 1, 0.02, seed);
    ones += (c[2] == 1) + (c[5] == 1);
  }
  CHECK(ones == 100);
}
