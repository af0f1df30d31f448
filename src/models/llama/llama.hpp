// A small LLaMA-style decoder: RMSNorm, rotary positions, SwiGLU, untied
// head; forward and backward over whatever full weights it is handed
// (src/models/model.hpp; units in llama_layout.hpp).
//
// Order of calls:
//   forward:  tok_embeddings, layers.0 .. layers.{L-1}, norm, output
//   backward: output, norm, layers.{L-1} .. layers.0, then the embeddings'
//             gradient (no weights needed: grad(0) without acquire(0))
// Every unit's gradient is complete after a single stretch of the
// backward, so the description declares no shared unit.
#pragma once

#include <memory>
#include <vector>

#include "kernels/runtime/common.hpp"
#include "src/models/decoder.hpp"
#include "src/models/llama/llama_layout.hpp"

namespace zeropp {

template <class T>
class Llama final : public Decoder<T> {
 public:
  // Activations are allocated for up to B sequences of up to Tmax tokens.
  Llama(const ModelConfig& cfg, int B, int Tmax);
  ~Llama() override;

  std::vector<int> unit_schedule(Pass pass) const override;
  double forward(CVec<int32_t> tokens, CVec<int32_t> targets, int B, int Tn, UnitSource<T>& src) override;
  void backward(T dloss, UnitSource<T>& src) override;
  int64_t activation_bytes() const override;
  // Generation with the KV cache (model.hpp), in the family's _decode.cpp.
  CVec<T> decode(CVec<int32_t> tokens, int B, int Tn, int pos, UnitSource<T>& src) override;

 private:
  std::pair<int, int> mlp_widths() const override { return llama_mlp_widths(this->cfg_); }
  struct Acts;
  // Block l's forward over the last forward's B×Tn tokens with its full
  // weights w; recomputing (model.recompute = layer, in the backward) stops
  // before the block's output (the next block's input, kept), which its own
  // backward does not read.
  void block_forward(int l, CVec<T> w, bool recomputing);
  using Decoder<T>::cfg_;
  using Decoder<T>::layout_;
  using Decoder<T>::B_;
  using Decoder<T>::Tn_;
  int F_;  // SwiGLU hidden size
  std::unique_ptr<Acts> a_;
};

}  // namespace zeropp
