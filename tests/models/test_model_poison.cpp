// The models never touch their buffers on the host (src/models on device
// buffers, kernels/runtime/device_context.hpp): run by ctest's model_poison with
// ZEROPP_POISON_HOST_ACCESS=1, so the model's activations, its KV cache and
// the weights, gradients and tokens handed to it all live in the PROT_NONE
// arena (kernels/runtime/device_memory.hpp) and any host access faults. One training
// step (forward, backward; bf16, then fp32) with plain and weighted losses, a decode step and
// greedy generation (src/generate/generate.cpp, training's sample) and rlhf's
// completion log-probabilities (src/rlhf/rollout.cpp), for both
// families, must run through and give what the same work on host weights or
// without the cache gives.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "kernels/gemm/gemm_bf16.hpp"
#include "kernels/ops/buffer_ops.hpp"
#include "kernels/runtime/device_buffer.hpp"
#include "models/full_weights.hpp"
#include "src/generate/generate.hpp"
#include "src/models/model.hpp"
#include "src/rlhf/rollout.hpp"

using namespace zeropp;

namespace {

// Full weights and gradients in device buffers: what the engine hands a model.
struct DeviceWeights final : UnitSource<float> {
  std::vector<Buffer<float>> w, g;

  DeviceWeights(const Model<float>& model, uint64_t seed) {
    for (size_t u = 0; u < model.layout().units.size(); ++u) {
      const int64_t n = model.layout().units[u].numel;
      std::vector<float> h(static_cast<size_t>(n));
      model.init_unit(int(u), seed, 0, n, h.data());
      w.emplace_back("w", n);
      g.emplace_back("g", n);
      copy_to_device(h.data(), w.back().view());
    }
  }
  CVec<float> acquire(int u) override { return w[size_t(u)].view(); }
  void release(int) override {}
  Vec<float> grad(int u) override { return g[size_t(u)].view(); }
  void grad_done(int) override {}
  std::vector<float> grads() const {
    std::vector<float> all;
    for (const auto& b : g) {
      const std::vector<float> h = to_host(b);
      all.insert(all.end(), h.begin(), h.end());
    }
    return all;
  }
};

// V, max_seq_len, L, H, C, family, LLaMA's SwiGLU width.
ModelConfig poison_model(const std::string& family) {
  return ModelConfig{13, 6, 2, 2, 8, deck_value<ModelFamily>(family).value(), family == "llama" ? 12 : 0};
}

}  // namespace

TEST_CASE("a training step and a decode step touch the model's buffers only through kernels",
          "[.model-poison]") {
  REQUIRE(poison_host_access());
  // bf16 GEMMs as the fp32 BLAS on operands that convert's round_to_bf16
  // rounds (gemm_bf16, rounded_operand): a kernel, so it may read the arena.
  force_bf16_kernel(Bf16Kernel::RoundedBlas);
  const int B = 2, Tn = 5, V = 13;
  const int64_t BT = int64_t(B) * Tn;
  std::vector<int32_t> tok(static_cast<size_t>(BT)), tgt(static_cast<size_t>(BT));
  for (int64_t i = 0; i < BT; ++i) {
    tok[size_t(i)] = int32_t((3 * i + 1) % V);
    tgt[size_t(i)] = int32_t((5 * i + 2) % V);
  }
  Buffer<int32_t> tokens("tokens", BT), targets("targets", BT);
  copy_to_device(tok.data(), tokens.view());
  copy_to_device(tgt.data(), targets.view());
  for (const std::string family : {"gpt2", "llama"}) {
    INFO(family);
    const ModelConfig m = poison_model(family);
    const auto model = make_model<float>(m, B, Tn);
    DeviceWeights dev(*model, 5);

    // The step on device buffers ...
    double loss = 0;
    for (const Precision prec : {Precision::BF16, Precision::FP32}) {  // bf16: operands rounded in kernels
      model->set_precision(prec);
      for (Buffer<float>& g : dev.g) fill(g, 0.0f);
      loss = model->forward(tokens.view(), targets.view(), B, Tn, dev);
      model->backward(1.0f / float(BT), dev);
      const std::vector<float> grads = dev.grads();
      // ... is the step on host weights (the model's own buffers stay in the arena).
      test::FullWeights<float> host(*model, 5);
      host.zero_grad();
      CHECK(model->forward(CVec<int32_t>(tok.data(), BT), CVec<int32_t>(tgt.data(), BT), B, Tn, host) ==
            loss);
      model->backward(1.0f / float(BT), host);
      std::vector<float> want;
      for (const auto& gu : host.g) want.insert(want.end(), gu.data(), gu.data() + gu.size());
      CHECK(grads == want);
    }
    CHECK(std::isfinite(loss));
    CHECK(std::abs(loss - std::log(double(V))) < 0.1);  // small initial weights: near uniform

    // Loss weights reach the device: all 2 double the loss.
    model->set_loss_weights(std::vector<float>(size_t(BT), 2.0f));
    CHECK(model->forward(tokens.view(), targets.view(), B, Tn, dev) == Approx(2 * loss).epsilon(1e-6));
    model->backward(1.0f / float(BT), dev);
    model->set_loss_weights({});

    // A forward without targets, then the same tokens decoded: the last position's
    // logits give the forward's probabilities there.
    model->forward(tokens.view(), CVec<int32_t>(), B, Tn, dev);
    std::vector<float> probs(size_t(BT) * V);
    copy_to_host(model->probs(), probs.data());
    {  // rlhf's log-probabilities of completions [Tp = 2, Tc = 4]: per-token losses of a
       // forward whose targets are the next tokens, read through copy_to_host
      const int Tp = 2, Tc = 4;  // Tp + Tc = Tn + 1
      std::vector<int32_t> next(static_cast<size_t>(BT));
      for (int b = 0; b < B; ++b)
        for (int t = 0; t < Tn; ++t) next[size_t(b * Tn + t)] = t + 1 < Tn ? tok[size_t(b * Tn + t + 1)] : b;
      Buffer<int32_t> next_dev("next", BT);
      copy_to_device(next.data(), next_dev.view());
      model->set_backward_follows(false);
      model->forward(tokens.view(), next_dev.view(), B, Tn, dev);
      model->set_backward_follows(true);
      const std::vector<double> lp = completion_log_probs(model->token_losses(), B, Tp, Tc);
      for (int b = 0; b < B; ++b)
        for (int t = 0; t < Tc; ++t) {
          const int pos = Tp + t - 1;
          CHECK(
              lp[size_t(b * Tc + t)] ==
              Approx(std::log(probs[size_t((b * Tn + pos) * V + next[size_t(b * Tn + pos)])])).margin(1e-5));
        }
    }
    model->decode_reset(B);
    const CVec<float> logits = model->decode(tokens.view(), B, Tn, 0, dev);
    std::vector<float> l(size_t(B) * V);
    copy_to_host(logits, l.data());
    for (int b = 0; b < B; ++b) {
      double mx = -INFINITY, z = 0;
      for (int v = 0; v < V; ++v) mx = std::max(mx, double(l[size_t(b * V + v)]));
      for (int v = 0; v < V; ++v) z += std::exp(double(l[size_t(b * V + v)]) - mx);
      for (int v = 0; v < V; ++v) {
        const double p = std::exp(double(l[size_t(b * V + v)]) - mx) / z;
        CHECK(p == Approx(probs[size_t((b * Tn + Tn - 1) * V + v)]).margin(1e-5));
      }
    }

    // Generation: tokens in, logits out, with the cache and without.
    SamplingRule greedy;
    greedy.temperature = 0;
    const PassRunner run = [&dev](const std::function<void(UnitSource<float>&)>& f) { f(dev); };
    const std::vector<std::vector<int32_t>> prompts = {{1, 2, 3}, {4}};
    std::vector<std::vector<int32_t>> got[2];
    for (const Decoding mode : {Decoding::KVCache, Decoding::Recompute}) {
      CoinStream coins(1);
      got[mode == Decoding::KVCache] = generate(
          *model, run, prompts, 3, greedy, coins, [](int, int32_t) {}, mode);
    }
    CHECK(got[0] == got[1]);
    CHECK(got[1][0].size() == 3);
  }
  force_bf16_kernel(std::nullopt);
}
