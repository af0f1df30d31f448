// The pieces of `zeropp rlhf` that are arithmetic: the reward rule, the
// returns and advantages of the policy gradient, the rollouts (through the
// KV-cache generator) and the log-probabilities they score (src/rlhf/reward.hpp, policy_gradient.hpp,
// rollout.hpp). The loop itself: tests/cli/rlhf.sh.
#include <catch2/catch.hpp>
#include <cmath>

#include "kernels/runtime/device_memory.hpp"
#include "models/full_weights.hpp"
#include "src/rlhf/policy_gradient.hpp"
#include "src/rlhf/reward.hpp"
#include "src/rlhf/rollout.hpp"
#include "zero/engine_fixture.hpp"

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

TEST_CASE("rollouts continue each prompt through the generator and score what they drew", "[rlhf]") {
  const ModelConfig m{64, 16, 2, 2, 24, ModelFamily::Gpt2, 0};
  const int B = 2, Tp = 3, Tc = 4, S = Tp + Tc;
  const auto model = make_model<float>(m, B, m.max_seq_len);
  test::FullWeights<float> src(*model, 5);
  const PassRunner run = [&](const std::function<void(UnitSource<float>&)>& f) { f(src); };
  const std::vector<int32_t> prompts = {1, 2, 3, 40, 41, 42};
  const std::vector<int32_t> s = sample_completions(*model, run, prompts, B, Tp, Tc, 1.0, 42);
  REQUIRE(s.size() == size_t(B) * S);
  for (int b = 0; b < B; ++b)  // each row: its prompt, then Tc tokens of the vocabulary
    for (int t = 0; t < S; ++t) {
      const int32_t x = s[size_t(b * S + t)];
      if (t < Tp) CHECK(x == prompts[size_t(b * Tp + t)]);
      CHECK((x >= 0 && x < m.vocab_size));
    }
  CHECK(sample_completions(*model, run, prompts, B, Tp, Tc, 1.0, 42) == s);  // the seed decides
  CHECK(sample_completions(*model, run, prompts, B, Tp, Tc, 1.0, 43) != s);
  // A temperature near 0 draws the greedy continuation.
  SamplingRule greedy;
  greedy.temperature = 0;
  CoinStream coins(1);
  const auto want = generate(*model, run, {{1, 2, 3}, {40, 41, 42}}, Tc, greedy, coins, [](int, int32_t) {});
  const std::vector<int32_t> cold = sample_completions(*model, run, prompts, B, Tp, Tc, 1e-4, 7);
  for (int b = 0; b < B; ++b)
    CHECK(std::vector<int32_t>(cold.begin() + b * S + Tp, cold.begin() + (b + 1) * S) == want[size_t(b)]);
}

TEST_CASE("completion log-probabilities are read at the positions that predict the completion", "[rlhf]") {
  // B = 2, Tp = 2, Tc = 3: rows of Tn = 4 inputs; loss 10·b + position.
  const int B = 2, Tp = 2, Tc = 3, Tn = Tp + Tc - 1;
  std::vector<float> losses(size_t(B) * Tn);
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < Tn; ++i) losses[size_t(b * Tn + i)] = float(10 * b + i);
  const std::vector<double> lp =
      completion_log_probs(CVec<float>(losses.data(), int64_t(losses.size())), B, Tp, Tc);
  REQUIRE(lp.size() == size_t(B) * Tc);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < Tc; ++t) CHECK(lp[size_t(b * Tc + t)] == -double(10 * b + Tp - 1 + t));
}

TEST_CASE("the engine's per-token losses are minus the log of its probabilities at the targets", "[rlhf]") {
  // What rlhf scores with (Engine::token_losses) against the full probabilities it replaced.
  Config c = test::tiny(1, "fp32");
  Run run(c);
  const int B = c.train.batch_size, T = c.train.seq_len, V = c.model.vocab_size;
  const MicroBatch mb = micro_batches(*run.train, 0, 1)[0];
  std::vector<float> p(size_t(B) * T * size_t(V)), losses(size_t(B) * T);
  copy_to_host(run.engine.probs(mb.tokens, B, T), p.data());
  copy_to_host(run.engine.token_losses(mb), losses.data());
  for (size_t i = 0; i < losses.size(); ++i) {
    INFO("token " << i);
    CHECK(-double(losses[i]) ==
          Approx(std::log(double(p[i * size_t(V) + size_t(mb.targets[i])]))).margin(1e-5));
  }
}
