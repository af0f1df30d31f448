// The whole model: gradient check in double precision, call order, init.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "core/full_weights.hpp"
#include "src/models/gpt2/gpt2.hpp"

using namespace zeropp;
using test::FullWeights;

namespace {
ModelConfig tiny_model() {
  ModelConfig m;
  m.vocab_size = 11;
  m.max_seq_len = 6;
  m.n_layer = 2;
  m.n_head = 2;
  m.n_embd = 8;
  return m;
}
}  // namespace

TEST_CASE("whole-model gradient matches central differences in double", "[model]") {
  const ModelConfig cfg = tiny_model();
  const int B = 2, T = 5;
  GPT<double> model(cfg, B, T);
  FullWeights<double> src(model.layout(), 7);
  // Perturb every parameter (biases and gains too) so no gradient is trivially zero.
  std::mt19937 rng(3);
  src.perturb(rng, 0.3);
  Buf<int32_t> tok("tok", B * T), tgt("tgt", B * T);
  std::uniform_int_distribution<int> uv(0, cfg.vocab_size - 1);
  for (int i = 0; i < B * T; ++i) {
    tok(i) = uv(rng);
    tgt(i) = uv(rng);
  }
  const CVec<int32_t> ctok(tok.data(), B * T), ctgt(tgt.data(), B * T);
  src.zero_grad();
  model.forward(ctok, ctgt, B, T, src);
  model.backward(1.0 / (B * T), src);

  const double h = 1e-5;
  int64_t checked = 0;
  double worst = 0;
  for (size_t u = 0; u < src.w.size(); ++u)
    for (size_t i = 0; i < src.w[u].size(); ++i) {
      double& x = src.w[u](i);
      const double x0 = x;
      x = x0 + h;
      const double lp = model.forward(ctok, ctgt, B, T, src);
      x = x0 - h;
      const double lm = model.forward(ctok, ctgt, B, T, src);
      x = x0;
      const double num = (lp - lm) / (2 * h), ana = src.g[u](i);
      const double err = std::abs(num - ana) / std::max(1e-3, std::abs(num) + std::abs(ana));
      worst = std::max(worst, err);
      INFO("unit " << u << " element " << i << ": analytic " << ana << " numeric " << num);
      REQUIRE(err < 1e-5);
      ++checked;
    }
  REQUIRE(checked == model.layout().numel);
  WARN("whole-model gradcheck: " << checked << " parameters, worst relative error " << worst);
}

TEST_CASE("the model acquires units in its published schedule and completes every gradient once", "[model]") {
  const ModelConfig cfg = tiny_model();
  GPT<double> model(cfg, 1, 4);
  FullWeights<double> src(model.layout(), 1);
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
  ModelConfig cfg = tiny_model();
  cfg.n_embd = 64;
  cfg.n_layer = 8;
  const ParamLayout layout = ParamLayout::gpt2(cfg);
  const int u = layout.block_unit(3);
  const int64_t n = layout.units[size_t(u)].numel;
  std::vector<float> whole(static_cast<size_t>(n)), parts(static_cast<size_t>(n));
  GPT<float>::init_unit(layout, u, 42, 0, n, whole.data());
  const int64_t cut = n / 3 + 1;
  GPT<float>::init_unit(layout, u, 42, 0, cut, parts.data());
  GPT<float>::init_unit(layout, u, 42, cut, n, parts.data() + cut);
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
  GPT<float>::init_unit(layout, u, 43, 0, n, other.data());
  CHECK(other != whole);
}

TEST_CASE("parameter names and shapes are Hugging Face GPT-2's", "[model]") {
  ModelConfig cfg;
  cfg.vocab_size = 50257;
  cfg.max_seq_len = 1024;
  cfg.n_layer = 12;
  cfg.n_head = 12;
  cfg.n_embd = 768;
  const ParamLayout L = ParamLayout::gpt2(cfg);
  REQUIRE(L.numel == 124439808);  // GPT-2 small, tied head counted once
  REQUIRE(L.find("wte.weight")->shape == std::vector<int64_t>{50257, 768});
  REQUIRE(L.find("h.11.attn.c_attn.weight")->shape == std::vector<int64_t>{768, 2304});
  REQUIRE(L.find("h.0.mlp.c_proj.weight")->shape == std::vector<int64_t>{3072, 768});
  REQUIRE(L.find("ln_f.bias")->shape == std::vector<int64_t>{768});
  REQUIRE(L.units.size() == 14);
}
