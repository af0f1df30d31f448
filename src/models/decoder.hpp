// What the decoder families (GPT-2, LLaMA) share behind the Model interface:
// their configuration and description, the size of the last forward, the
// probabilities left by a forward without targets, and the initialisation
// (N(0, 0.02), residual-stream projections N(0, 0.02/sqrt(2L)), as each
// family's layout marks them). Each family adds its passes and buffers.
#pragma once

#include <cmath>
#include <utility>

#include "kernels/crossentropy.hpp"
#include "kernels/matmul.hpp"
#include "src/base/errors.hpp"
#include "src/models/decoder_parts.hpp"
#include "src/models/model.hpp"

namespace zeropp {

template <class T>
class Decoder : public Model<T> {
 public:
  const ModelDescription& describe() const override { return desc_; }
  CVec<T> probs() const override { return CVec<T>(logits_.data(), int64_t(B_) * Tn_ * cfg_.vocab_size); }
  void init_unit(int unit, uint64_t seed, int64_t begin, int64_t end, T* out) const override {
    init_elements(layout_.units[size_t(unit)], unit, seed, 0.02, 0.02 / std::sqrt(2.0 * cfg_.n_layer), begin,
                  end, out);
  }

 protected:
  // Buffers for up to B sequences of up to Tmax tokens.
  Decoder(const ModelConfig& cfg, ModelDescription desc, int B, int Tmax)
      : cfg_(cfg),
        desc_(std::move(desc)),
        layout_(desc_.layout),
        tokens_("tokens", size_t(B) * Tmax),
        targets_("targets", size_t(B) * Tmax),
        logits_("logits", size_t(B) * Tmax * cfg.vocab_size),
        losses_("losses", size_t(B) * Tmax) {}
  // Records B×Tn for backward() and probs() and keeps the tokens (and the
  // targets, when given) in the family's buffers; whether targets were given.
  bool begin_forward(CVec<int32_t> tokens, CVec<int32_t> targets, int B, int Tn) {
    B_ = B;
    Tn_ = Tn;
    return decoder::keep_tokens(tokens_, targets_, tokens, targets, int64_t(B) * Tn);
  }
  // The last forward's LM head: logits of x [B·Tn, C] against unit `unit`'s
  // first parameter [V, C], turned into probabilities in place; with targets,
  // the per-token losses into losses_ and their mean returned (else 0).
  double head_and_loss(UnitSource<T>& src, int unit, CVec<T> x, bool with_targets) {
    const int C = cfg_.n_embd, V = cfg_.vocab_size;
    const int64_t BT = int64_t(B_) * Tn_;
    const Vec<T> logits = decoder::at(logits_, 0, BT * V);
    CVec<T> w = src.acquire(unit);
    matmul_forward<T>(logits, x, decoder::P(w, layout_.units[size_t(unit)].params[0]), CVec<T>(), int(BT), C,
                      V, Trans::T, this->prec_);
    src.release(unit);
    softmax_crossentropy_forward<T>(logits, decoder::at(losses_, 0, BT), logits,
                                    with_targets ? CVec<int32_t>(targets_.data(), BT) : CVec<int32_t>(),
                                    int(BT), V);
    if (!with_targets) return 0.0;
    return this->loss_weights_.empty() ? decoder::mean_loss(losses_, BT)
                                       : decoder::weighted_mean_loss(losses_, weights(BT), BT);
  }
  // The LM head's backward: the gradient of dloss·sum_n w_n·loss_n with
  // respect to the logits, overwriting the probabilities in logits_.
  Vec<T> head_backward(T dloss) {
    const int V = cfg_.vocab_size;
    const int64_t BT = int64_t(B_) * Tn_;
    const Vec<T> dlogits = decoder::at(logits_, 0, BT * V);
    softmax_crossentropy_backward<T>(dlogits, dlogits, CVec<int32_t>(targets_.data(), BT), dloss, int(BT), V);
    if (!this->loss_weights_.empty()) decoder::scale_rows(dlogits, weights(BT), BT, V);
    return dlogits;
  }
  // The loss weights of the last forward's BT tokens (a mismatch is a caller's bug).
  CVec<T> weights(int64_t BT) const {
    if (int64_t(this->loss_weights_.size()) != BT)
      fatal(
          "Decoder::weights", __FILE__, __LINE__,
          std::to_string(this->loss_weights_.size()) + " loss weights for " + std::to_string(BT) + " tokens");
    return CVec<T>(this->loss_weights_.data(), BT);
  }
  Decoder(const Decoder&) = delete;  // layout_ points into desc_
  Decoder& operator=(const Decoder&) = delete;

  ModelConfig cfg_;
  ModelDescription desc_;
  const ParamLayout& layout_;
  int B_ = 0, Tn_ = 0;             // the last forward's batch and sequence length
  Buf<int32_t> tokens_, targets_;  // the last forward's, for its backward
  Buf<T> logits_;                  // [B, T, V]: probabilities after a forward, dlogits in backward
  Buf<T> losses_;                  // [B, T]

  // Bytes of the buffers above, part of each family's activation_bytes().
  int64_t own_bytes() const {
    return int64_t((logits_.size() + losses_.size()) * sizeof(T) +
                   (tokens_.size() + targets_.size()) * sizeof(int32_t));
  }
};

}  // namespace zeropp
