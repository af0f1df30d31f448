// The KV-cache generator (src/generate/generate.hpp): greedy generation equals
// recomputing the whole forward for every token, batching prompts of different
// lengths changes no token, and on P ranks (ctest generate_np1/2/4; ZeRO-3,
// hpZ) the engine's sharded weights generate token for token what one rank
// with the full weights generates (fp32 communication, qwZ off).
#include <catch2/catch.hpp>

#include "models/full_weights.hpp"
#include "src/generate/generate.hpp"
#include "zero/engine_fixture.hpp"

using namespace zeropp;
using namespace zeropp::test;

namespace {

// V, max_seq_len, L, H, C, family (LLaMA's SwiGLU width: 4C).
ModelConfig gen_model(const std::string& family) {
  return ModelConfig{64, 16, 2, 2, 24, deck_value<ModelFamily>(family).value(), 0};
}

const std::vector<std::vector<int32_t>> kPrompts = {{5, 9, 1}, {7}, {3, 3, 60, 2, 8}};

PassRunner full(FullWeights<float>& src) {
  return [&src](const std::function<void(UnitSource<float>&)>& f) { f(src); };
}

std::vector<std::vector<int32_t>> run_generate(Model<float>& model, const PassRunner& run,
                                               const std::vector<std::vector<int32_t>>& prompts, int n,
                                               const SamplingRule& rule, uint64_t seed,
                                               Decoding mode = Decoding::KVCache) {
  CoinStream coins(seed);
  std::vector<std::vector<int32_t>> streamed(prompts.size());
  const auto out = generate(
      model, run, prompts, n, rule, coins, [&](int b, int32_t t) { streamed[size_t(b)].push_back(t); }, mode);
  REQUIRE(streamed == out);  // every token reached the sink, in order
  return out;
}

SamplingRule greedy() {
  SamplingRule r;
  r.temperature = 0;
  return r;
}

}  // namespace

TEST_CASE("generate: greedy with the KV cache equals recomputing the forward for every token", "[model]") {
  for (const std::string family : {"gpt2", "llama"}) {
    INFO(family);
    const ModelConfig m = gen_model(family);
    const auto model = make_model<float>(m, 3, m.max_seq_len);
    FullWeights<float> src(*model, 11);
    const int n = 10;
    const auto got = run_generate(*model, full(src), kPrompts, n, greedy(), 1);
    // `generate --recompute`, the timing baseline, is the same loop through forward().
    REQUIRE(run_generate(*model, full(src), kPrompts, n, greedy(), 1, Decoding::Recompute) == got);
    for (size_t i = 0; i < kPrompts.size(); ++i) {
      // The old way: the whole sequence through forward() for each new token.
      std::vector<int32_t> seq = kPrompts[i];
      Buf<int32_t> tok("tok", size_t(m.max_seq_len));
      for (int k = 0; k < n; ++k) {
        const int T = int(seq.size());
        for (int t = 0; t < T; ++t) tok(t) = seq[size_t(t)];
        model->forward(CVec<int32_t>(tok.data(), T), CVec<int32_t>(), 1, T, src);
        const CVec<float> p = model->probs();
        seq.push_back(greedy_token(p.data() + int64_t(T - 1) * m.vocab_size, m.vocab_size));
      }
      const std::vector<int32_t> want(seq.begin() + long(kPrompts[i].size()), seq.end());
      REQUIRE(got[i] == want);
      // Alone in its batch: the same tokens.
      REQUIRE(run_generate(*model, full(src), {kPrompts[i]}, n, greedy(), 1)[0] == want);
    }
  }
}

TEST_CASE("generate: a prompt that does not fit the context is refused naming the numbers", "[model]") {
  CHECK_THROWS_WITH(check_generation_fits({{1, 2, 3}}, 15, 16), Catch::Contains("needs 17 positions"));
  CHECK_NOTHROW(check_generation_fits({{1, 2, 3}}, 14, 16));
  CHECK_THROWS_WITH(check_generation_fits({{1}, {}}, 4, 16), Catch::StartsWith("prompt 2 is empty"));
  CHECK_THROWS_WITH(check_generation_fits({{1}}, 0, 16), Catch::StartsWith("--max-new-tokens 0"));
}

TEST_CASE("generate: P ranks with sharded weights equal one rank with the full weights", "[generate]") {
  const int P = world_size();
  for (const std::string family : {"gpt2", "llama"})
    for (int hpz : {1, 2}) {
      if (hpz > P || P % hpz != 0) continue;
      INFO(family << " P=" << P << " hpZ " << hpz);
      Config c = tiny(1, "fp32");
      c.model = gen_model(family);
      c.train.batch_size = 3;
      c.zero.quantized_weights = false;
      c.zero.hpz_partition_size = hpz;
      c.zero.ranks_per_node = hpz;
      Run run(c);
      const auto ref_model = make_model<float>(c.model, 3, c.model.max_seq_len);
      FullWeights<float> src(*ref_model, uint64_t(c.train.seed));
      const PassRunner sharded = [&](const std::function<void(UnitSource<float>&)>& f) {
        run.engine.inference_pass(f);
      };
      for (const SamplingRule& rule : {greedy(), SamplingRule{0.8, 5, 0.9}}) {
        const auto want = run_generate(*ref_model, full(src), kPrompts, 12, rule, 3);
        REQUIRE(run_generate(*run.model, sharded, kPrompts, 12, rule, 3) == want);
      }
    }
}
