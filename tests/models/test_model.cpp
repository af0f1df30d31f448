// The whole model: gradient check in double precision, call order, init.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "models/full_weights.hpp"
#include "models/model_gradcheck.hpp"
#include "src/models/gpt2/gpt2.hpp"

using namespace zeropp;
using test::FullWeights;

TEST_CASE("whole-model gradient matches central differences in double", "[model]") {
  GPT<double> model(test::tiny_model_config(), 2, 5);
  test::check_model_gradient(model, test::tiny_model_config().vocab_size, 2, 5);
}

TEST_CASE("the model acquires units in its published schedule and completes every gradient once", "[model]") {
  const ModelConfig cfg = test::tiny_model_config();
  GPT<double> model(cfg, 1, 4);
  FullWeights<double> src(model, 1);
  Buf<int32_t> tok("tok", 4);
  for (int i = 0; i < 4; ++i) tok(i) = i;
  const CVec<int32_t> t(tok.data(), 4);
  model.forward(t, t, 1, 4, src);
  REQUIRE(src.acquired == model.unit_schedule(Pass::Forward));
  src.acquired.clear();
  model.backward(0.25, src);
  REQUIRE(src.acquired == model.unit_schedule(Pass::Backward));
  std::vector<int> expect_done;  // ln_f, blocks in reverse, then the embeddings
  for (int u = cfg.n_layer + 1; u >= 0; --u) expect_done.push_back(u);
  REQUIRE(src.done == expect_done);
}

TEST_CASE("initialisation follows GPT-2 and does not depend on how a unit is split", "[model]") {
  ModelConfig cfg = test::tiny_model_config();
  cfg.n_embd = 64;
  cfg.n_layer = 8;
  const GPT<float> model(cfg, 1, 1);
  const ParamLayout& layout = model.layout();
  const int u = gpt2::block_unit(3);
  const int64_t n = layout.units[size_t(u)].numel;
  std::vector<float> whole(static_cast<size_t>(n)), parts(static_cast<size_t>(n));
  model.init_unit(u, 42, 0, n, whole.data());
  const int64_t cut = n / 3 + 1;
  model.init_unit(u, 42, 0, cut, parts.data());
  model.init_unit(u, 42, cut, n, parts.data() + cut);
  REQUIRE(whole == parts);
  const auto stats = [&](const std::string& name) {
    const ParamSpec* p = layout.find(name);
    REQUIRE(p != nullptr);
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < p->numel; ++i) {
      s += whole[size_t(p->offset + i)];
      s2 += double(whole[size_t(p->offset + i)]) * whole[size_t(p->offset + i)];
    }
    return std::make_pair(s / double(p->numel), std::sqrt(s2 / double(p->numel)));
  };
  const auto [m_attn, sd_attn] = stats("h.3.attn.c_attn.weight");
  CHECK(std::abs(m_attn) < 0.002);
  CHECK(sd_attn == Approx(0.02).epsilon(0.05));
  const auto [m_proj, sd_proj] = stats("h.3.mlp.c_proj.weight");
  CHECK(sd_proj == Approx(0.02 / std::sqrt(2.0 * cfg.n_layer)).epsilon(0.05));
  CHECK(stats("h.3.ln_1.weight") == std::make_pair(1.0, 1.0));
  CHECK(stats("h.3.attn.c_attn.bias") == std::make_pair(0.0, 0.0));
  std::vector<float> other(static_cast<size_t>(n));
  model.init_unit(u, 43, 0, n, other.data());
  CHECK(other != whole);
}

TEST_CASE("parameter names and shapes are Hugging Face GPT-2's", "[model]") {
  ModelConfig cfg;
  cfg.vocab_size = 50257;
  cfg.max_seq_len = 1024;
  cfg.n_layer = 12;
  cfg.n_head = 12;
  cfg.n_embd = 768;
  const ParamLayout L = gpt2_layout(cfg);
  REQUIRE(L.numel == 124439808);  // GPT-2 small, tied head counted once
  REQUIRE(L.find("wte.weight")->shape == std::vector<int64_t>{50257, 768});
  REQUIRE(L.find("h.11.attn.c_attn.weight")->shape == std::vector<int64_t>{768, 2304});
  REQUIRE(L.find("h.0.mlp.c_proj.weight")->shape == std::vector<int64_t>{3072, 768});
  REQUIRE(L.find("ln_f.bias")->shape == std::vector<int64_t>{768});
  REQUIRE(L.units.size() == 14);
}
