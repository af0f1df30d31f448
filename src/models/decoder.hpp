// What the decoder families (GPT-2, LLaMA) share behind the Model interface:
// their configuration and description, the size of the last forward, the LM
// head with its loss (chunked, its backward run in the forward: lm_head_loss.hpp),
// the probabilities left by a forward without targets, and the initialisation
// (N(0, 0.02), residual-stream projections N(0, 0.02/sqrt(2L)), as each
// family's layout marks them). Each family adds its passes and buffers.
// Every buffer is a Buffer<T> (device memory when a device context is
// installed, kernels/runtime/device_context.hpp): the decoders touch them only through
// kernels, buffer operations and copy_to_device, and read a value on the host
// only where they return one (the loss, through sum or dot).
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "kernels/ops/attention_decode.hpp"
#include "kernels/ops/crossentropy.hpp"
#include "kernels/ops/lm_head_loss.hpp"
#include "kernels/ops/matmul.hpp"
#include "src/base/errors.hpp"
#include "src/models/activation_plan.hpp"
#include "src/models/decoder_parts.hpp"
#include "src/models/kv_cache.hpp"
#include "src/models/model.hpp"

namespace zeropp {

template <class T>
class Decoder : public Model<T> {
 public:
  const ModelDescription& describe() const override { return desc_; }
  CVec<T> probs() const override { return CVec<T>(probs_.data(), int64_t(B_) * Tn_ * cfg_.vocab_size); }
  CVec<T> token_losses() const override { return CVec<T>(losses_.data(), int64_t(B_) * Tn_); }
  void init_unit(int unit, uint64_t seed, int64_t begin, int64_t end, T* out) const override {
    init_elements(layout_.units[size_t(unit)], unit, seed, 0.02, 0.02 / std::sqrt(2.0 * cfg_.n_layer), begin,
                  end, out);
  }
  void decode_reset(int B) override {
    if (B < 1 || B > Bmax_)
      throw Error("decode_reset: " + std::to_string(B) + " sequences; the model holds 1.." +
                  std::to_string(Bmax_));
    // Sized for the B asked for (the training sample's one sequence does not
    // pay for Bmax); grown when a later reset asks for more.
    if (B > dec_alloc_B_) {
      const auto [H1, H2] = mlp_widths();
      dec_.reset();
      cache_.reset();
      cache_ = std::make_unique<KVCache<T>>(cfg_.n_layer, B, Tmax_, cfg_.n_embd);
      dec_ = std::make_unique<DecodeScratch<T>>(B, Tmax_, cfg_.n_embd, cfg_.n_head, H1, H2, cfg_.vocab_size);
      dec_alloc_B_ = B;
    }
    dec_B_ = B;
  }
  int64_t decode_bytes() const override {
    return (cache_ ? cache_->bytes() + dec_->bytes() : 0) + probs_.bytes();
  }

 protected:
  // Buffers for up to B sequences of up to Tmax tokens.
  Decoder(const ModelConfig& cfg, ModelDescription desc, int B, int Tmax)
      : Decoder(cfg, std::move(desc), B, Tmax, decoder_activation_plan(cfg, B, Tmax)) {}
  // Records B×Tn for backward() and probs() and keeps the tokens (and the
  // targets, when given) in the family's buffers; whether targets were given.
  bool begin_forward(CVec<int32_t> tokens, CVec<int32_t> targets, int B, int Tn) {
    B_ = B;
    Tn_ = Tn;
    return decoder::keep_tokens(tokens_, targets_, tokens, targets, int64_t(B) * Tn);
  }
  // The last forward's LM head: x [B·Tn, C] against unit `unit`'s first
  // parameter [V, C]. Without targets, the probabilities of every position into
  // probs_ (allocated by the first such forward); returns 0. With targets, the
  // per-token losses into losses_ and their (weighted) mean returned; when a
  // backward follows, the head's backward too, chunk by chunk
  // (lm_head_loss.hpp): dx gets the gradient of the summed weighted losses
  // with respect to x and head_grad_ that of the head's weights, both
  // unscaled until head_backward.
  double head_and_loss(UnitSource<T>& src, int unit, CVec<T> x, Vec<T> dx, bool with_targets) {
    const int C = cfg_.n_embd, V = cfg_.vocab_size;
    const int64_t BT = int64_t(B_) * Tn_;
    CVec<T> w = decoder::P(src.acquire(unit), layout_.units[size_t(unit)].params[0]);
    CVec<T> lw;  // the loss weights on the device (empty: none)
    head_pending_ = with_targets && this->backward_follows_;
    if (!with_targets) {
      if (probs_.size() == 0) probs_ = Buffer<T>("probs", int64_t(Bmax_) * Tmax_ * V);
      const Vec<T> probs = decoder::at(probs_, 0, BT * V);
      matmul_forward<T>(probs, x, w, CVec<T>(), int(BT), C, V, Trans::T, this->prec_);
      softmax_crossentropy_forward<T>(probs, decoder::at(losses_, 0, BT), probs, CVec<int32_t>(), int(BT), V);
    } else {
      lw = this->loss_weights_.empty() ? CVec<T>() : weights(BT);
      lm_head_loss<T>(head_pending_ ? dx : Vec<T>(),
                      head_pending_ ? decoder::at(head_grad_, 0, int64_t(V) * C) : Vec<T>(),
                      decoder::at(losses_, 0, BT), decoder::at(logits_, 0, int64_t(chunk_rows_) * V), x, w,
                      CVec<int32_t>(targets_.data(), BT), lw, int(BT), C, V, chunk_rows_, this->prec_);
    }
    src.release(unit);
    if (!with_targets) return 0.0;
    return lw.size() == 0 ? decoder::mean_loss(losses_, BT) : decoder::weighted_mean_loss(losses_, lw, BT);
  }
  // Starts a backward: scales the head's input gradient dx (head_and_loss's)
  // by dloss and adds dloss times the head's weight gradient into
  // grad(unit); the family calls grad_done(unit) when the unit is complete.
  void head_backward(UnitSource<T>& src, int unit, T dloss, Vec<T> dx) {
    if (!head_pending_)
      fatal("Decoder::head_backward", __FILE__, __LINE__,
            "backward without a forward with targets that prepared it (Model::set_backward_follows)");
    head_pending_ = false;
    const int64_t n = int64_t(cfg_.vocab_size) * cfg_.n_embd;
    scale(dx, dloss);
    axpy(decoder::G(src.grad(unit), layout_.units[size_t(unit)].params[0]), CVec<T>(head_grad_.data(), n),
         dloss);
  }
  // The loss weights of the last forward's BT tokens, copied to the device
  // (a mismatch is a caller's bug).
  CVec<T> weights(int64_t BT) {
    if (int64_t(this->loss_weights_.size()) != BT)
      fatal(
          "Decoder::weights", __FILE__, __LINE__,
          std::to_string(this->loss_weights_.size()) + " loss weights for " + std::to_string(BT) + " tokens");
    copy_to_device(this->loss_weights_.data(), loss_weights_dev_.view(0, BT));
    return CVec<T>(loss_weights_dev_.data(), BT);
  }
  // The widths of the family's two MLP activations per token (decode scratch).
  virtual std::pair<int, int> mlp_widths() const = 0;
  // What a family's decode() works with: the step's tokens on the device,
  // the scratch, the model's C and L, and B·Tn and B·Tn·C.
  struct DecodeStep {
    CVec<int32_t> tok;
    DecodeScratch<T>& s;
    int C, L;
    int64_t BT, nC;
  };
  // Checks a decode call against the last decode_reset and the cache's size
  // and keeps its tokens.
  DecodeStep begin_decode(CVec<int32_t> tokens, int B, int Tn, int pos) {
    if (!cache_ || B != dec_B_ || Tn < 1 || pos < 0 || pos + Tn > Tmax_ ||
        int64_t(tokens.size()) < int64_t(B) * Tn)
      throw Error("decode: " + std::to_string(B) + "x" + std::to_string(Tn) + " tokens at position " +
                  std::to_string(pos) + " after decode_reset(" + std::to_string(dec_B_) + ") with room for " +
                  std::to_string(Tmax_) + " positions");
    const int64_t BT = int64_t(B) * Tn;
    decoder::keep_tokens(tokens_, targets_, CVec<int32_t>(tokens.data(), BT), CVec<int32_t>(), BT);
    return {CVec<int32_t>(tokens_.data(), BT), *dec_, cfg_.n_embd, cfg_.n_layer, BT, BT * cfg_.n_embd};
  }
  // Layer l's attention of the step's queries over the cache, into dec_->atty:
  // appends the keys and values of qkv [B,Tn,3C] at pos first.
  void cached_attention(int l, CVec<T> qkv, int B, int Tn, int pos) {
    const int C = cfg_.n_embd, Tmax = cache_->Tmax;
    const int64_t BT = int64_t(B) * Tn, cached = int64_t(B) * Tmax * C;
    cache_->append(l, qkv, B, Tn, pos);
    attention_decode<T>(decoder::at(dec_->atty, 0, BT * C),
                        decoder::at(dec_->att, 0, BT * cfg_.n_head * (pos + Tn)), qkv,
                        decoder::at(cache_->k[size_t(l)], 0, cached),
                        decoder::at(cache_->v[size_t(l)], 0, cached), B, Tn, pos, Tmax, C, cfg_.n_head);
  }
  // The decode step's logits [B, V]: x [B, C] (each sequence's last position
  // after the final norm) against unit `unit`'s first parameter [V, C].
  CVec<T> decode_logits(UnitSource<T>& src, int unit, CVec<T> x) {
    const int C = cfg_.n_embd, V = cfg_.vocab_size, B = dec_B_;
    CVec<T> w = src.acquire(unit);
    matmul_forward<T>(decoder::at(dec_->logits, 0, int64_t(B) * V), x,
                      decoder::P(w, layout_.units[size_t(unit)].params[0]), CVec<T>(), B, C, V, Trans::T,
                      this->prec_);
    src.release(unit);
    return CVec<T>(dec_->logits.data(), int64_t(B) * V);
  }
  Decoder(const Decoder&) = delete;  // layout_ points into desc_
  Decoder& operator=(const Decoder&) = delete;

  ModelConfig cfg_;
  ModelDescription desc_;
  const ParamLayout& layout_;
  const int Bmax_, Tmax_;  // the sizes the buffers hold
  int B_ = 0, Tn_ = 0;     // the last forward's batch and sequence length
  int dec_B_ = 0;          // sequences since the last decode_reset
  int dec_alloc_B_ = 0;    // sequences the cache and its scratch hold
  std::unique_ptr<KVCache<T>> cache_;
  std::unique_ptr<DecodeScratch<T>> dec_;
  Buffer<int32_t> tokens_, targets_;  // the last forward's, for its backward
  int chunk_rows_;                    // rows of the LM head's chunks (lm_head_chunk_rows)
  Buffer<T> logits_;                  // [chunk_rows_, V]: one chunk's logits, probabilities, dlogits
  Buffer<T> head_grad_;               // [V, C]: the head's weight gradient, from the forward to the backward
  Buffer<T> losses_;                  // [B, T]
  Buffer<T> loss_weights_dev_;        // [B, T]: Model::loss_weights_ on the device, while set
  Buffer<T> probs_;                   // [B, T, V] after a forward without targets (allocated by the first)
  bool head_pending_ = false;         // the last forward ran the head's backward

  // Bytes of the buffers above allocated at construction, part of each
  // family's activation_bytes() (probs_ is decode_bytes()'s).
  int64_t own_bytes() const {
    return logits_.bytes() + head_grad_.bytes() + losses_.bytes() + loss_weights_dev_.bytes() +
           tokens_.bytes() + targets_.bytes();
  }

 private:
  Decoder(const ModelConfig& cfg, ModelDescription desc, int B, int Tmax, const ActivationPlan& own)
      : cfg_(cfg),
        desc_(std::move(desc)),
        layout_(desc_.layout),
        Bmax_(B),
        Tmax_(Tmax),
        tokens_(allocate_one<int32_t>(own, "tokens")),
        targets_(allocate_one<int32_t>(own, "targets")),
        chunk_rows_(int(own.at("logits").elements / cfg.vocab_size)),
        logits_(allocate_one<T>(own, "logits")),
        head_grad_(allocate_one<T>(own, "head_grad")),
        losses_(allocate_one<T>(own, "losses")),
        loss_weights_dev_(allocate_one<T>(own, "loss_weights")) {}
};

}  // namespace zeropp
