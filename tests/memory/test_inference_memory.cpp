// The memory estimates of the runs outside training against what they
// really allocate, on 1, 2 and 4 ranks (4 as 2 emulated nodes of 2):
// `generate` (a frozen engine, the model, its KV cache and decode scratch or
// its probabilities, every zero.inference_weights route) and `rlhf` (the
// actor, its rollouts, the frozen reference); the refusal line of each.
#include <catch2/catch.hpp>

#include "src/base/logging.hpp"
#include "src/memory/inference_memory.hpp"
#include "src/rlhf/rlhf.hpp"
#include "src/rlhf/rollout.hpp"
#include "src/zero/inference_weights.hpp"
#include "zero/engine_fixture.hpp"

using namespace zeropp;
using test::tiny;
using test::world_size;

TEST_CASE("the decode bytes formula equals the model's KV cache and scratch for several shapes", "[memory]") {
  struct Shape {
    const char* family;
    int V, Tmax, L, H, C, ffn, Bmax, B;
  };
  const Shape shapes[] = {{"gpt2", 64, 16, 2, 2, 24, 0, 2, 2},
                          {"gpt2", 11, 7, 3, 3, 12, 0, 5, 3},  // a reset below Bmax: sized for B
                          {"llama", 29, 12, 2, 3, 12, 20, 3, 3},
                          {"llama", 50, 9, 1, 2, 16, 0, 4, 1}};
  for (const Shape& s : shapes) {
    const ModelConfig m{s.V, s.Tmax, s.L, s.H, s.C, deck_value<ModelFamily>(s.family).value(), s.ffn};
    const auto model = make_model<float>(m, s.Bmax, s.Tmax);
    CHECK(model->decode_bytes() == 0);  // nothing before the first reset
    model->decode_reset(s.B);
    INFO(s.family << " L=" << s.L << " C=" << s.C << " Bmax=" << s.Bmax << " B=" << s.B);
    CHECK(model->decode_bytes() == model_decode_bytes(m, s.B, s.Tmax));
  }
}

TEST_CASE("the generate estimate equals what a frozen engine, its model and every weight route allocate",
          "[memory]") {
  const int P = world_size();
  for (const std::string family : {"gpt2", "llama"})
    for (const std::string dtype : {"fp32", "bf16"})
      for (const auto& route : deck_names(WeightSource{}))
        DYNAMIC_SECTION(family << " " << dtype << " " << route.name << " on P=" << P) {
          Config c = tiny(1, dtype);
          c.model.family = deck_value<ModelFamily>(family).value();
          c.zero.ranks_per_node = P == 4 ? 2 : 0;
          c.zero.weight_block = 32;  // slices of part blocks: padded to whole ones
          c.zero.inference_weights = route.value;
          c.train.batch_size = 3;
          c.train.seq_len = c.model.max_seq_len;  // as generate builds the model: the whole position table
          Run run(c);                             // the topology and communicator
          const int B = c.train.batch_size, T = c.train.seq_len;
          const auto model = make_model<float>(c.model, B, T);
          Engine frozen(c, run.topo, *run.comm, *model, true);
          frozen.init_weights(1);
          const auto weights = frozen.inference_weights();
          model->decode_reset(B);
          const MemoryEstimate e = estimate_generate_memory(c, run.topo.P, run.topo.X, Decoding::KVCache);
          const MemoryReport got = frozen.memory();
          CHECK(e.states.master == got.master);
          CHECK(e.states.gather == got.gather);
          CHECK(e.states.secondary == got.secondary);
          CHECK(e.states.total() == got.total());
          CHECK(e.activations == model->activation_bytes() + 8 * int64_t(B) * T);
          CHECK(e.decode == model->decode_bytes());
          CHECK(e.inference_weights == weights->copy_bytes() + weights->buffer_bytes());
          if (route.value != WeightSource::Zero3 && route.value != WeightSource::Hpz)
            CHECK(weights->copy_bytes() > 0);
          // Recomputing the forward per token: the probabilities' buffer instead of the cache.
          const std::vector<int32_t> tokens(size_t(B) * T, 1);
          frozen.probs(tokens, B, T);
          const MemoryEstimate r = estimate_generate_memory(c, run.topo.P, run.topo.X, Decoding::Recompute);
          CHECK(e.decode + r.decode == model->decode_bytes());
          CHECK(r.total() - r.decode == e.total() - e.decode);
        }
}

TEST_CASE("a generate run that does not fit is refused naming --batch, the KV cache and the weights' copy",
          "[memory]") {
  Config c = tiny(1, "bf16");
  c.zero.inference_weights = WeightSource::Full;
  MemoryCheck m;
  m.need = estimate_generate_memory(c, 2, 2, Decoding::KVCache);
  m.ranks_on_node = 2;
  m.node = {2 * m.need.total(), "ZEROPP_MEMORY_AVAILABLE"};
  CHECK_FALSE(memory_refusal(m, c));
  m.node.bytes -= 1;
  const auto r = memory_refusal(m, c);
  REQUIRE(r);
  CHECK(r->find('\n') == std::string::npos);
  CHECK_THAT(*r, Catch::Contains("each rank needs " + human_bytes(double(m.need.total()))) &&
                     Catch::Contains("KV cache and decode " + human_bytes(double(m.need.decode))) &&
                     Catch::Contains("inference weights " + human_bytes(double(m.need.inference_weights))) &&
                     Catch::Contains("a smaller --batch") &&
                     Catch::Contains("zero.inference_weights = zero3") &&
                     !Catch::Contains("train.batch_size"));
  c.zero.inference_weights = WeightSource::Zero3;  // already the smallest: not a knob
  CHECK_THAT(*memory_refusal(m, c), !Catch::Contains("zero.inference_weights"));
}

TEST_CASE("the rlhf estimate counts the actor's rollouts and the whole frozen reference", "[memory]") {
  const int P = world_size();
  Config cfg = tiny(1, "fp32");
  cfg.zero.ranks_per_node = P == 4 ? 2 : 0;
  cfg.rlhf.batch_size = 2;
  cfg.rlhf.prompt_len = 4;
  cfg.rlhf.completion_len = 5;
  const Config e = rlhf_engine_config(cfg);
  const int B = e.train.batch_size, T = e.train.seq_len, Tp = cfg.rlhf.prompt_len,
            Tc = cfg.rlhf.completion_len;
  Run run(e, MPI_COMM_WORLD, estimate_rlhf_memory);
  const Config ref_cfg = rlhf_reference_config(e);
  const auto ref_model = make_model<float>(e.model, B, T);
  Engine reference(ref_cfg, run.topo, *run.comm, *ref_model, true);
  reference.init_weights(1);
  // One iteration's allocations: the rollouts (KV cache), both models' scoring forwards.
  const PassRunner pass = [&](const std::function<void(UnitSource<float>&)>& f) {
    run.engine.inference_pass(f);
  };
  const std::vector<int32_t> prompts(size_t(B) * Tp, 3);
  const std::vector<int32_t> seqs = sample_completions(*run.model, pass, prompts, B, Tp, Tc, 1.0, 7);
  std::vector<int32_t> tokens;
  for (int b = 0; b < B; ++b)
    tokens.insert(tokens.end(), seqs.begin() + b * (T + 1), seqs.begin() + b * (T + 1) + T);
  MicroBatch mb;
  mb.tokens = tokens;
  mb.targets = tokens;  // any tokens: the buffers are what is measured
  run.engine.token_losses(mb);
  reference.token_losses(mb);

  const MemoryEstimate m = estimate_rlhf_memory(e, run.topo.P, run.topo.X);
  CHECK(run.memory.need.total() == m.total());  // what Run checked before allocating
  CHECK(m.states.total() == run.engine.memory().total());
  CHECK(m.activations == run.model->activation_bytes() + 8 * int64_t(B) * T);
  CHECK(m.decode == run.model->decode_bytes());
  const int64_t ref_all = reference.memory().total() + ref_model->activation_bytes() + 8 * int64_t(B) * T +
                          ref_model->decode_bytes();
  CHECK(m.reference == ref_all);
  CHECK(reference.memory().grad + reference.memory().adam + reference.memory().grad_full == 0);

  MemoryCheck c;
  c.need = m;
  c.node = {m.total() - 1, "MemAvailable"};
  const auto r = memory_refusal(c, e);
  REQUIRE(r);
  CHECK_THAT(*r, Catch::Contains("rlhf reference " + human_bytes(double(m.reference))) &&
                     Catch::Contains("rlhf.batch_size"));
}
