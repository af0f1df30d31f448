// Per-token loss weights (Model::set_loss_weights), what `zeropp rlhf`'s
// policy gradient trains with: the weighted loss's gradient against central
// differences in double for both families, and weights all 1 reproducing the
// plain loss and gradient bit for bit.
#include <catch2/catch.hpp>
#include <random>

#include "models/full_weights.hpp"
#include "models/model_gradcheck.hpp"
#include "src/models/gpt2/gpt2.hpp"
#include "src/models/llama/llama.hpp"

using namespace zeropp;
using test::FullWeights;

namespace {

// Weights as the policy gradient makes them: zero on prompt tokens, advantages of either sign elsewhere.
template <class T>
std::vector<T> advantage_like(int n) {
  std::mt19937 rng(11);
  std::normal_distribution<double> adv(0.3, 1.0);
  std::vector<T> w(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) w[size_t(i)] = i % 5 < 2 ? T(0) : T(adv(rng));
  return w;
}

ModelConfig tiny_llama() {
  ModelConfig m = test::tiny_model_config();
  m.family = ModelFamily::Llama;
  m.ffn_hidden = 12;
  return m;
}

// Loss and every gradient of one forward and backward over fixed tokens.
template <class T>
std::pair<double, std::vector<T>> loss_and_grad(Model<T>& model, FullWeights<T>& src, int B, int Tn) {
  std::vector<int32_t> tok(size_t(B) * Tn), tgt(size_t(B) * Tn);
  for (int i = 0; i < B * Tn; ++i) {
    tok[size_t(i)] = (3 * i + 1) % 11;
    tgt[size_t(i)] = (5 * i + 2) % 11;
  }
  src.zero_grad();
  const double loss =
      model.forward(CVec<int32_t>(tok.data(), B * Tn), CVec<int32_t>(tgt.data(), B * Tn), B, Tn, src);
  model.backward(T(1.0 / (B * Tn)), src);
  std::vector<T> g;
  for (const auto& gu : src.g) g.insert(g.end(), gu.data(), gu.data() + gu.size());
  return {loss, g};
}

}  // namespace

TEST_CASE("the weighted loss's gradient matches central differences in double", "[weighted-loss]") {
  const int B = 2, Tn = 5;
  SECTION("gpt2") {
    GPT<double> model(test::tiny_model_config(), B, Tn);
    model.set_loss_weights(advantage_like<double>(B * Tn));
    test::check_model_gradient(model, 11, B, Tn);
  }
  SECTION("llama") {
    Llama<double> model(tiny_llama(), B, Tn);
    model.set_loss_weights(advantage_like<double>(B * Tn));
    test::check_model_gradient(model, 11, B, Tn);
  }
}

TEST_CASE("the weighted loss is the weighted mean of the per-token losses", "[weighted-loss]") {
  const int B = 2, Tn = 5;
  GPT<double> model(test::tiny_model_config(), B, Tn);
  FullWeights<double> src(model, 5);
  const double plain = loss_and_grad(model, src, B, Tn).first;
  // A weight of 2 on every token doubles the loss and its gradient.
  model.set_loss_weights(std::vector<double>(size_t(B) * Tn, 2.0));
  const auto [twice, g2] = loss_and_grad(model, src, B, Tn);
  model.set_loss_weights({});
  const auto [once, g1] = loss_and_grad(model, src, B, Tn);
  CHECK(twice == Approx(2 * plain).epsilon(1e-14));
  CHECK(once == plain);
  for (size_t i = 0; i < g1.size(); ++i) REQUIRE(g2[i] == Approx(2 * g1[i]).epsilon(1e-12).margin(1e-300));
}

TEST_CASE("weights all 1 give the plain loss and gradient bit for bit", "[weighted-loss]") {
  const int B = 2, Tn = 5;
  for (const ModelConfig& cfg : {test::tiny_model_config(), tiny_llama()}) {
    const auto model = make_model<float>(cfg, B, Tn);
    FullWeights<float> src(*model, 9);
    const auto [plain, g_plain] = loss_and_grad(*model, src, B, Tn);
    model->set_loss_weights(std::vector<float>(size_t(B) * Tn, 1.0f));
    const auto [ones, g_ones] = loss_and_grad(*model, src, B, Tn);
    INFO(deck_name(cfg.family));
    CHECK(ones == plain);
    REQUIRE(g_ones == g_plain);
  }
}
