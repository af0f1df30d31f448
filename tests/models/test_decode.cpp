// KV-cache decoding (Model::decode) against the full forward: the logits at
// every position a prefill and the single-token steps after it produce must be
// the forward's over the whole sequence (GPT-2 and LLaMA, double and float),
// units must be acquired in the forward's schedule, and a reset must start over.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "models/full_weights.hpp"
#include "src/models/model.hpp"

using namespace zeropp;
using test::FullWeights;

namespace {

// V, max_seq_len, L, H, C, family, LLaMA's SwiGLU width.
ModelConfig decode_model(const std::string& family) {
  return ModelConfig{29, 12, 2, 3, 12, deck_value<ModelFamily>(family).value(), family == "llama" ? 20 : 0};
}

// Softmax of logits[0..V) in double.
template <class T>
std::vector<double> softmax(const T* logits, int V) {
  double mx = -INFINITY, sum = 0;
  for (int i = 0; i < V; ++i) mx = std::max(mx, double(logits[i]));
  std::vector<double> p(static_cast<size_t>(V));
  for (int i = 0; i < V; ++i) sum += p[size_t(i)] = std::exp(double(logits[i]) - mx);
  for (auto& x : p) x /= sum;
  return p;
}

// Runs B sequences of S tokens: the forward over all of them, then a decode
// prefill of `prefill` tokens, a step of 2, and single tokens to the end;
// every decode step's probabilities must equal the forward's at its last
// position. Returns the worst absolute difference.
template <class T>
double decode_vs_forward(const std::string& family, int B, int S, int prefill, uint64_t seed) {
  const ModelConfig m = decode_model(family);
  const auto model = make_model<T>(m, B, m.max_seq_len);
  FullWeights<T> src(*model, seed);
  std::mt19937 rng(static_cast<unsigned>(seed));
  src.perturb(rng, T(0.05));  // biases and gains away from 0 and 1
  std::uniform_int_distribution<int> tok(0, m.vocab_size - 1);
  Buf<int32_t> all("all", size_t(B) * S);
  for (int i = 0; i < B * S; ++i) all(i) = tok(rng);
  model->forward(CVec<int32_t>(all.data(), B * S), CVec<int32_t>(), B, S, src);
  const CVec<T> probs = model->probs();  // [B, T, V]
  std::vector<T> want(probs.data(), probs.data() + probs.size());

  model->decode_reset(B);
  double worst = 0;
  Buf<int32_t> step("step", size_t(B) * S);
  for (int pos = 0; pos < S;) {
    const int Tn = pos == 0 ? prefill : pos == prefill ? std::min(2, S - pos) : 1;
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < Tn; ++t) step(b * Tn + t) = all(b * S + pos + t);
    src.acquired.clear();
    const CVec<T> logits = model->decode(CVec<int32_t>(step.data(), B * Tn), B, Tn, pos, src);
    REQUIRE(src.acquired == model->unit_schedule(Pass::Forward));
    REQUIRE(int64_t(logits.size()) == int64_t(B) * m.vocab_size);
    pos += Tn;
    for (int b = 0; b < B; ++b) {
      const auto p = softmax(logits.data() + int64_t(b) * m.vocab_size, m.vocab_size);
      for (int v = 0; v < m.vocab_size; ++v) {
        const double d = std::abs(p[size_t(v)] - double(want[(size_t(b) * S + pos - 1) * m.vocab_size + v]));
        INFO(family << " b=" << b << " position " << pos - 1 << " token " << v);
        REQUIRE(d == Approx(0).margin(sizeof(T) == 8 ? 1e-12 : 1e-5));
        worst = std::max(worst, d);
      }
    }
  }
  return worst;
}

}  // namespace

TEMPLATE_TEST_CASE("decode with the KV cache equals the full forward at every position", "[model][decode]",
                   double, float) {
  for (const std::string family : {"gpt2", "llama"})
    for (const auto& [B, T, prefill] : {std::array<int, 3>{2, 12, 4}, {1, 7, 1}, {3, 9, 9}}) {
      INFO(family << " B=" << B << " T=" << T << " prefill=" << prefill);
      const double worst = decode_vs_forward<TestType>(family, B, T, prefill, 5);
      WARN(family << " " << (sizeof(TestType) == 8 ? "double" : "float") << " B=" << B << " T=" << T
                  << ": worst |p_decode - p_forward| = " << worst);
    }
}

TEST_CASE("decode: a reset starts new sequences; bad calls are refused", "[model][decode]") {
  const ModelConfig m = decode_model("gpt2");
  const auto model = make_model<double>(m, 2, m.max_seq_len);
  FullWeights<double> src(*model, 3);
  Buf<int32_t> tok("tok", 4);
  for (int i = 0; i < 4; ++i) tok(i) = 3 + i;
  const CVec<int32_t> t(tok.data(), 4);
  CHECK(model->decode_bytes() == 0);  // nothing allocated before generation
  model->decode_reset(1);
  CHECK(model->decode_bytes() > 0);
  const CVec<double> first = model->decode(t, 1, 4, 0, src);
  const std::vector<double> a(first.data(), first.data() + m.vocab_size);
  model->decode(t, 1, 2, 4, src);  // the cache moves on
  model->decode_reset(1);
  const CVec<double> again = model->decode(t, 1, 4, 0, src);
  for (int v = 0; v < m.vocab_size; ++v) REQUIRE(again(v) == a[size_t(v)]);
  CHECK_THROWS_WITH(model->decode(t, 1, 1, m.max_seq_len, src), Catch::Contains("position 12"));
  CHECK_THROWS_WITH(model->decode(t, 2, 1, 4, src), Catch::Contains("decode_reset(1)"));
  CHECK_THROWS_WITH(model->decode_reset(3), Catch::Contains("1..2"));
  const int64_t one = model->decode_bytes();
  model->decode_reset(2);  // grows the cache for two sequences
  CHECK(model->decode_bytes() > one);
  model->decode(CVec<int32_t>(tok.data(), 4), 2, 2, 0, src);
  // A forward without targets allocates the probabilities for Bmax x Tmax, counted here too.
  const int64_t decoding = model->decode_bytes();
  model->forward(t, CVec<int32_t>(), 1, 4, src);
  CHECK(model->decode_bytes() ==
        decoding + int64_t(2) * m.max_seq_len * m.vocab_size * int64_t(sizeof(double)));
}
