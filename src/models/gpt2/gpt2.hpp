// GPT-2: forward and backward over whatever full weights it is handed.
//
// The model never owns its parameters and never talks to MPI. It asks a
// UnitSource for the full flat buffer of a unit (see gpt2_layout.hpp) just
// before using it and says when it is done with it; in the backward pass it
// asks for the unit's gradient buffer, accumulates into it, and says when the
// unit's gradient is complete. A single process hands out its own buffers; the
// ZeRO engine gathers shards and reduces gradients behind the same calls.
//
// Order of calls (the engine prefetches along it, see unit_schedule):
//   forward:  embeddings, h.0 .. h.{L-1}, ln_f, embeddings (tied LM head)
//   backward: embeddings (LM head), ln_f, h.{L-1} .. h.0, embeddings (wte, wpe)
// The embeddings' gradient is complete only after the last use: both uses
// of the tied wte are summed before grad_done(0), which is why the
// description declares unit 0 shared.
#pragma once

#include <memory>
#include <vector>

#include "kernels/runtime/common.hpp"
#include "src/models/decoder.hpp"
#include "src/models/gpt2/gpt2_layout.hpp"

namespace zeropp {

template <class T>
class GPT final : public Decoder<T> {
 public:
  // Activations are allocated for up to B sequences of up to Tmax tokens.
  GPT(const ModelConfig& cfg, int B, int Tmax);
  ~GPT() override;

  std::vector<int> unit_schedule(Pass pass) const override;
  double forward(CVec<int32_t> tokens, CVec<int32_t> targets, int B, int Tn, UnitSource<T>& src) override;
  void backward(T dloss, UnitSource<T>& src) override;
  int64_t activation_bytes() const override;
  // Generation with the KV cache (model.hpp), in the family's _decode.cpp.
  CVec<T> decode(CVec<int32_t> tokens, int B, int Tn, int pos, UnitSource<T>& src) override;

 private:
  std::pair<int, int> mlp_widths() const override { return gpt2_mlp_widths(this->cfg_); }
  struct Acts;
  // Block l's forward over the last forward's B×Tn tokens with its full
  // weights w, its output into out; recomputing (model.recompute = layer, in
  // the backward) stops before the output's last GEMM, which that block's
  // backward does not read.
  void block_forward(int l, CVec<T> w, Vec<T> out, bool recomputing);
  using Decoder<T>::cfg_;
  using Decoder<T>::layout_;
  using Decoder<T>::B_;
  using Decoder<T>::Tn_;
  std::unique_ptr<Acts> a_;
};

}  // namespace zeropp
