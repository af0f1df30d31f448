// The second model family (src/models/llama): gradient check, call order and
// buffer accounting on one process, and training through the unchanged
// engine at 1, 2 and 4 ranks (ctest llama_np*), ZeRO-3 and ZeRO++, against
// one rank on the same global batch (as test_engine.cpp does for GPT-2).
// The one-rank engine against full weights: test_engine_full_weights.cpp.
#include <catch2/catch.hpp>
#include <cmath>

#include "models/full_weights.hpp"
#include "models/model_gradcheck.hpp"
#include "src/memory/memory_estimate.hpp"
#include "src/models/llama/llama.hpp"
#include "zero/engine_fixture.hpp"

using namespace zeropp;
using namespace zeropp::test;

namespace {
ModelConfig tiny_llama_model() {
  ModelConfig m = tiny_model_config();
  m.family = ModelFamily::Llama;
  m.ffn_hidden = 12;
  return m;
}

Config tiny_llama(int A, const std::string& dtype) {
  Config c = tiny(A, dtype);
  c.model.family = ModelFamily::Llama;
  c.model.ffn_hidden = 40;
  return c;
}
}  // namespace

TEST_CASE("llama: whole-model gradient matches central differences in double", "[model]") {
  Llama<double> model(tiny_llama_model(), 2, 5);
  check_model_gradient(model, tiny_llama_model().vocab_size, 2, 5);
}

TEST_CASE("llama: units follow the schedule, no unit is shared, the head is untied", "[model]") {
  const ModelConfig cfg = tiny_llama_model();
  const auto model = make_model<double>(cfg, 1, 4);
  REQUIRE(model->describe().family == "llama");
  CHECK(model->describe().shared_units.empty());
  CHECK(model->layout().find("output.weight") != nullptr);
  FullWeights<double> src(*model, 1);
  Buf<int32_t> tok("tok", 4);
  for (int i = 0; i < 4; ++i) tok(i) = i;
  const CVec<int32_t> t(tok.data(), 4);
  model->forward(t, t, 1, 4, src);
  REQUIRE(src.acquired == model->unit_schedule(Pass::Forward));
  src.acquired.clear();
  model->backward(0.25, src);
  REQUIRE(src.acquired == model->unit_schedule(Pass::Backward));
  std::vector<int> expect_done;  // head, norm, blocks in reverse, embeddings
  for (int u = cfg.n_layer + 2; u >= 0; --u) expect_done.push_back(u);
  REQUIRE(src.done == expect_done);
}

TEST_CASE("llama: activation bytes match its buffers; resume identity differs from GPT-2's", "[model]") {
  for (const auto& [L, C, H, V, B, T, F] :
       std::vector<std::array<int, 7>>{{1, 16, 2, 256, 2, 32, 0}, {3, 24, 3, 11, 5, 7, 40}}) {
    ModelConfig m{V, T, L, H, C, ModelFamily::Llama, F};
    Llama<float> model(m, B, T);
    CHECK(model_activation_bytes(m, B, T) == model.activation_bytes());
  }
  ModelConfig g = tiny_llama_model();
  g.family = ModelFamily::Gpt2;
  const std::string d = identity_differences(describe_model(g), describe_model(tiny_llama_model()));
  CHECK(d.find("family: gpt2 -> llama") != std::string::npos);
  CHECK(identity_differences(describe_model(tiny_llama_model()), describe_model(tiny_llama_model())).empty());
}

TEST_CASE("llama: ZeRO-3 on P ranks equals one rank on the same global batch; ZeRO++ trains like it",
          "[llama]") {
  const int P = world_size();
  for (int A : {1, 2}) {
    const Trace ref = train(tiny_llama(A * P, "fp32"), MPI_COMM_SELF);
    Config cfg = tiny_llama(A, "fp32");
    cfg.zero.ranks_per_node = P >= 2 ? 2 : 1;
    const Trace got = train(cfg, MPI_COMM_WORLD);
    INFO("P=" << P << " A=" << A);
    for (size_t s = 0; s < ref.losses.size(); ++s) {
      CHECK(got.losses[s] == Approx(ref.losses[s]).epsilon(1e-6));
      CHECK(got.norms[s] == Approx(ref.norms[s]).epsilon(1e-5));
    }
    double worst = 0;
    for (size_t u = 0; u < ref.weights.size(); ++u)
      worst = std::max(worst, max_rel(got.weights[u], ref.weights[u]));
    CHECK(worst < 1e-5);
    CHECK(ref.losses.back() < ref.losses.front());
    // hpZ is exact; qwZ + hpZ + qgZ stays within test_zeropp.cpp's bound (2%) of ZeRO-3.
    Config hpz = cfg;
    hpz.zero.hpz_partition_size = 0;
    const Trace h = train(hpz, MPI_COMM_WORLD);
    CHECK(h.losses == got.losses);
    CHECK(h.weights == got.weights);
    Config zpp = hpz;
    zpp.zero.quantized_weights = true;
    zpp.zero.weight_block = 32;
    zpp.zero.quantized_gradients = true;
    zpp.zero.gradient_block = 32;
    const Trace q = train(zpp, MPI_COMM_WORLD);
    for (size_t s = 0; s < q.losses.size(); ++s) {
      REQUIRE(std::isfinite(q.losses[s]));
      CHECK(std::abs(q.losses[s] - got.losses[s]) < 0.02 * got.losses[s]);
    }
  }
}
