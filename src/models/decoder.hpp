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
  Decoder(const ModelConfig& cfg, ModelDescription desc)
      : cfg_(cfg), desc_(std::move(desc)), layout_(desc_.layout) {}
  // Records B×Tn for backward() and probs() and keeps the tokens (and the
  // targets, when given) in the family's buffers; whether targets were given.
  bool begin_forward(const Buf<int32_t>& tokens_out, const Buf<int32_t>& targets_out, CVec<int32_t> tokens,
                     CVec<int32_t> targets, int B, int Tn) {
    B_ = B;
    Tn_ = Tn;
    return decoder::keep_tokens(tokens_out, targets_out, tokens, targets, int64_t(B) * Tn);
  }
  // The last forward's LM head: logits of x [B·Tn, C] against unit `unit`'s
  // first parameter [V, C], turned into probabilities in place; with targets,
  // the per-token losses into `losses` and their mean returned (else 0).
  double head_and_loss(UnitSource<T>& src, int unit, CVec<T> x, const Buf<T>& losses,
                       const Buf<int32_t>& targets, bool with_targets) {
    const int C = cfg_.n_embd, V = cfg_.vocab_size;
    const int64_t BT = int64_t(B_) * Tn_;
    const Vec<T> logits = decoder::at(logits_, 0, BT * V);
    CVec<T> w = src.acquire(unit);
    matmul_forward<T>(logits, x, decoder::P(w, layout_.units[size_t(unit)].params[0]), CVec<T>(), int(BT), C,
                      V, Trans::T, this->prec_);
    src.release(unit);
    softmax_crossentropy_forward<T>(logits, decoder::at(losses, 0, BT), logits,
                                    with_targets ? CVec<int32_t>(targets.data(), BT) : CVec<int32_t>(),
                                    int(BT), V);
    return with_targets ? decoder::mean_loss(losses, BT) : 0.0;
  }
  Decoder(const Decoder&) = delete;  // layout_ points into desc_
  Decoder& operator=(const Decoder&) = delete;

  ModelConfig cfg_;
  ModelDescription desc_;
  const ParamLayout& layout_;
  int B_ = 0, Tn_ = 0;  // the last forward's batch and sequence length
  Buf<T> logits_;       // the family's logits buffer [Bmax, Tmax, V], probabilities after a forward
};

}  // namespace zeropp
