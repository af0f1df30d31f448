// The fused fp32 kernels (fast_exp.hpp's exponential and tanh in the softmax
// rows and GELU, causal_softmax, layernorm_seed) against the same model in
// double, which runs the library exp/tanh: a short AdamW training curve from
// the same weights on the same batch must agree to float rounding.
//
// Bound: |loss_f32 - loss_f64| <= 1e-6 · loss_f64 at every step (seen: 1.6e-8
// for both families). The fast exponential is within 1.4 ulp of expf; float
// sums over a few hundred terms and 6 Adam steps at lr 1e-3 add little more.
// An exponential whose polynomial is off by 1e-4 in one coefficient fails it.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/ops/adamw.hpp"
#include "models/full_weights.hpp"
#include "src/models/model.hpp"

using namespace zeropp;
using test::FullWeights;

namespace {

// Losses of `steps` AdamW steps of model on one batch, starting from weights w0.
template <class T>
std::vector<double> loss_curve(const ModelConfig& cfg, const std::vector<std::vector<double>>& w0,
                               const Buf<int32_t>& tok, const Buf<int32_t>& tgt, int B, int Tn, int steps) {
  const auto made = make_model<T>(cfg, B, Tn);
  Model<T>& model = *made;
  FullWeights<T> src(model, 1);
  std::vector<Buf<T>> m, v;
  for (size_t u = 0; u < src.w.size(); ++u) {
    for (size_t i = 0; i < src.w[u].size(); ++i) src.w[u](i) = T(w0[u][i]);
    m.emplace_back("m", src.w[u].size());
    v.emplace_back("v", src.w[u].size());
  }
  std::vector<double> losses;
  for (int s = 1; s <= steps; ++s) {
    src.zero_grad();
    losses.push_back(model.forward(tok, tgt, B, Tn, src));
    model.backward(T(1) / T(B * Tn), src);
    for (size_t u = 0; u < src.w.size(); ++u)
      adamw_update<T>(src.w[u], m[u], v[u], src.g[u], int64_t(src.w[u].size()), T(1e-3), T(0.9), T(0.95),
                      T(1e-8), T(0.1), s, T(1));
  }
  return losses;
}

}  // namespace

TEST_CASE("fp32 training curve (fused kernels) equals the double one within rounding", "[model][fused]") {
  ModelConfig cfg{64, 48, 2, 4, 32};  // V, T, L, H, C: Tn 48 covers softmax lanes and tails
  cfg.family = GENERATE(ModelFamily::Gpt2, ModelFamily::Llama);
  INFO("model.family = " << deck_name(cfg.family));
  const int B = 2, Tn = 48, steps = 6;
  std::vector<std::vector<double>> w0;
  {
    const auto made = make_model<double>(cfg, B, Tn);
    FullWeights<double> init(*made, 5);
    std::mt19937 rng(6);
    init.perturb(rng, 0.05);  // biases and gains away from 0 and 1
    for (const auto& w : init.w) w0.emplace_back(w.data(), w.data() + w.size());
  }
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> uv(0, cfg.vocab_size - 1);
  Buf<int32_t> tok("tok", B * Tn), tgt("tgt", B * Tn);
  for (int i = 0; i < B * Tn; ++i) {
    tok(i) = uv(rng);
    tgt(i) = (tok(i) * 5 + 1) % cfg.vocab_size;  // learnable: the loss falls
  }
  const auto f = loss_curve<float>(cfg, w0, tok, tgt, B, Tn, steps);
  const auto d = loss_curve<double>(cfg, w0, tok, tgt, B, Tn, steps);
  double worst = 0;
  for (int s = 0; s < steps; ++s) {
    INFO("step " << s + 1 << ": float " << f[size_t(s)] << ", double " << d[size_t(s)]);
    const double rel = std::abs(f[size_t(s)] - d[size_t(s)]) / d[size_t(s)];
    REQUIRE(rel <= 1e-6);
    worst = std::max(worst, rel);
  }
  REQUIRE(d.back() < d.front());  // it trained
  WARN("fp32 vs double loss curve: worst relative difference " << worst << " over " << steps << " steps");
}
