// Activation recomputation (model.recompute = layer): each block's forward is
// rerun inside its backward's window, with the weights that backward holds,
// so losses, gradient norms, gradients, weights after N steps and the bytes
// every collective moved are bitwise those of recompute = none, for both
// families, under the engine on however many ranks the entry runs; and the
// estimate's activation term shrinks by exactly the per-layer buffers that
// recomputation no longer keeps.
#include <catch2/catch.hpp>

#include "src/memory/memory_estimate.hpp"
#include "src/models/model.hpp"
#include "src/run/preflight.hpp"
#include "zero/engine_fixture.hpp"

using namespace zeropp;
using namespace zeropp::test;

namespace {

struct Result {
  TracedRun run;
  std::vector<int64_t> bytes;  // every step's bytes sent, per kind and purpose
  int64_t activations = 0;     // the model's activation_bytes()
};

Result run_with(Config c, const std::string& recompute) {
  c.model.recompute = deck_value<Recompute>(recompute).value();
  Result r;
  r.run = train_traced(c, [&](Run& run, int64_t, const StepStats& st) {
    for (const auto& kind : st.bytes.sent)
      for (const auto& b : kind) r.bytes.insert(r.bytes.end(), {b.intra, b.inter});
    r.activations = run.model->activation_bytes();
  });
  return r;
}

// ZeRO-3 with fp32 communication, or ZeRO++ in full with the world one node;
// two micro-batches (recomputation between accumulated backwards) and a
// first, a middle and a last block.
Config deck(const std::string& family, bool zeropp) {
  Config c = tiny(2, zeropp ? "bf16" : "fp32");
  c.model.family = deck_value<ModelFamily>(family).value();
  c.model.n_layer = 3;
  c.zero.ranks_per_node = 1;
  return zeropp ? zeropp_full(c, world_size()) : c;
}

}  // namespace

TEST_CASE("recompute = layer: the whole trajectory bitwise that of none, no extra bytes", "[recompute]") {
  for (const char* family : {"gpt2", "llama"})
    for (bool zeropp : {false, true}) {
      INFO(family << (zeropp ? " ZeRO++" : " ZeRO-3") << " on " << world_size() << " ranks");
      const Config c = deck(family, zeropp);
      const Result none = run_with(c, "none"), layer = run_with(c, "layer");
      CHECK(layer.run.trace.losses == none.run.trace.losses);
      CHECK(layer.run.trace.norms == none.run.trace.norms);
      CHECK(layer.run.grads == none.run.grads);
      CHECK(layer.run.trace.weights == none.run.trace.weights);
      CHECK(layer.bytes == none.bytes);
      CHECK(none.run.trace.losses.back() < none.run.trace.losses.front());  // it trains
      CHECK(layer.activations < none.activations);
    }
}

TEST_CASE("the activation estimate per recompute policy: what the model allocates, less per-layer buffers",
          "[recompute]") {
  const int B = 2, T = 16;
  for (const char* family : {"gpt2", "llama"}) {
    INFO(family);
    ModelConfig m{64, T, 4, 2, 24, deck_value<ModelFamily>(family).value(), 0};
    const int64_t none = activation_bytes(m, B, T);
    m.recompute = Recompute::Layer;
    const int64_t layer = activation_bytes(m, B, T);
    CHECK(layer == make_model<float>(m, B, T)->activation_bytes() + 8 * int64_t(B) * T);
    // L - 1 blocks no longer keep their activations (res3, the next block's
    // input, stays per layer): per token GPT-2 keeps 15·C + 4 floats and
    // B·NH·T attention probabilities, LLaMA 10·C + 3·F + 2 floats and the same.
    const int64_t BT = int64_t(B) * T, C = m.n_embd, F = 4 * C, att = BT * m.n_head * T;
    const int64_t per_block =
        std::string(family) == "gpt2" ? BT * (15 * C + 4) + att : BT * (10 * C + 3 * F + 2) + att;
    CHECK(none - layer == 4 * (m.n_layer - 1) * per_block);
    CHECK(recompute_summary(m, B, T).rfind("layer: activations ", 0) == 0);
  }
}

// The message validate() throws after `overrides`, or "".
std::string refusal(const std::vector<std::string>& overrides) {
  Config c;
  try {
    apply_overrides(c, overrides);
    validate(c);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("model.recompute: another value, or weights the backward gathers differently, refused",
          "[recompute]") {
  const std::string bad = refusal({"--model.recompute=full"});
  CHECK(bad.find("model.recompute") != std::string::npos);
  CHECK(bad.find("layer") != std::string::npos);
  CHECK(bad.find('\n') == std::string::npos);
  const std::string qwz = refusal({"--model.recompute=layer", "--zero.quantized_weights=true",
                                   "--zero.quantized_weights_backward=false"});
  CHECK(qwz.find("model.recompute") != std::string::npos);
  CHECK(qwz.find("zero.quantized_weights_backward") != std::string::npos);
  CHECK(refusal({"--model.recompute=layer", "--zero.quantized_weights=true"}).find("model.recompute") ==
        std::string::npos);
}

TEST_CASE("the GPT-2 350M and 774M decks parse and their memory estimate per rank prints", "[recompute]") {
  for (const char* d : {"gpt2-350m", "gpt2-774m"}) {
    INFO(d);
    Config c = load_config(std::string(ZEROPP_SOURCE_DIR) + "/inputs/" + d + ".toml", {});
    CHECK(c.model.recompute == Recompute::Layer);
    const MemoryEstimate layer = estimate_memory(c, 4, 2);
    c.model.recompute = Recompute::None;
    const MemoryEstimate none = estimate_memory(c, 4, 2);
    CHECK(layer.states.total() == none.states.total());
    CHECK(layer.activations < none.activations / 2);
    MemoryCheck m;
    m.need = layer;
    m.ranks_on_node = 2;
    m.node = {int64_t(1) << 40, "test"};
    const std::string line = memory_summary(m);
    INFO(line);
    CHECK(line.find("activations ") != std::string::npos);
  }
}
