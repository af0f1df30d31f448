// The whole-model gradient check every family passes: in double precision,
// on full weights perturbed so that no gradient is trivially zero, every
// parameter's analytic gradient against a central difference of the loss.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "models/full_weights.hpp"

namespace zeropp::test {

// A model small enough for finite differences in double: V=11, T=6, 2 layers, 2 heads, C=8.
inline ModelConfig tiny_model_config() {
  ModelConfig m;
  m.vocab_size = 11;
  m.max_seq_len = 6;
  m.n_layer = 2;
  m.n_head = 2;
  m.n_embd = 8;
  return m;
}

// Tokens and targets are drawn from 0 .. V-1.
inline void check_model_gradient(Model<double>& model, int V, int B, int T) {
  FullWeights<double> src(model, 7);
  std::mt19937 rng(3);
  std::normal_distribution<double> n01(0, 0.3);
  for (auto& w : src.w)
    for (size_t i = 0; i < w.size(); ++i) w(i) += n01(rng);
  Buf<int32_t> tok("tok", B * T), tgt("tgt", B * T);
  std::uniform_int_distribution<int> uv(0, V - 1);
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
  WARN(model.describe().family << " whole-model gradcheck: " << checked
                               << " parameters, worst relative error " << worst);
}

}  // namespace zeropp::test
