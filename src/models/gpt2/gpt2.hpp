// GPT-2: forward and backward over whatever full weights it is handed.
//
// The model never owns its parameters and never talks to MPI. It asks a
// UnitSource for the full flat buffer of a unit (see param_layout.hpp) just
// before using it and says when it is done with it; in the backward pass it
// asks for the unit's gradient buffer, accumulates into it, and says when the
// unit's gradient is complete. A single process hands out its own buffers; the
// ZeRO engine gathers shards and reduces gradients behind the same calls.
//
// Order of calls (the engine prefetches along it, see unit_schedule):
//   forward:  embeddings, h.0 .. h.{L-1}, ln_f, embeddings (tied LM head)
//   backward: embeddings (LM head), ln_f, h.{L-1} .. h.0, embeddings (wte, wpe)
// The embeddings' gradient is complete only after the last use: both uses
// of the tied wte are summed before grad_done(0).
#pragma once

#include <memory>
#include <vector>

#include "kernels/common.hpp"
#include "kernels/precision.hpp"
#include "src/models/param_layout.hpp"

namespace zeropp {

template <class T>
class UnitSource {
 public:
  virtual ~UnitSource() = default;
  // Full weights of `unit`, valid until release(unit).
  virtual CVec<T> acquire(int unit) = 0;
  virtual void release(int unit) = 0;
  // Full-size gradient buffer of `unit` to accumulate into (backward only).
  virtual Vec<T> grad(int unit) = 0;
  // The unit's gradient for this micro-batch is complete.
  virtual void grad_done(int unit) = 0;
};

enum class Pass { Forward, Backward };

template <class T>
class GPT {
 public:
  // Activations are allocated for up to B sequences of up to Tmax tokens.
  GPT(const ModelConfig& cfg, int B, int Tmax);
  ~GPT();
  GPT(const GPT&) = delete;
  GPT& operator=(const GPT&) = delete;

  const ModelConfig& config() const { return cfg_; }
  const ParamLayout& layout() const { return layout_; }

  // Operand precision of the matrix products (train.precision); FP32 by
  // default. BF16 needs T = float.
  void set_precision(Precision p) { prec_ = p; }
  Precision precision() const { return prec_; }

  // The units in the order the model acquires them in each pass.
  std::vector<int> unit_schedule(Pass pass) const;

  // Runs B×Tn tokens (B <= max B, Tn <= Tmax). With targets (B×Tn), returns
  // the mean cross-entropy; without (empty), returns 0 and leaves the
  // next-token probabilities for probs(). Keeps what backward needs.
  double forward(CVec<int32_t> tokens, CVec<int32_t> targets, int B, int Tn, UnitSource<T>& src);

  // Backward of the last forward (which must have had targets). dloss
  // scales the gradient of the summed per-token losses: 1/(B·Tn) gives the
  // gradient of the mean; 1/(B·Tn·A) averages over A accumulated micro-batches.
  void backward(T dloss, UnitSource<T>& src);

  // Probabilities [B, Tn, V] after a forward without targets.
  CVec<T> probs() const;

  // Bytes of the activation and scratch buffers allocated for Bmax×Tmax
  // (what memory_estimate.hpp predicts).
  int64_t activation_bytes() const;

  // GPT-2 initialisation from `seed`: N(0, 0.02), residual projections
  // N(0, 0.02/sqrt(2L)), zero biases, unit LayerNorm gains. Writes the
  // elements [begin, end) of unit `unit`'s flat buffer into `out` (so each
  // rank can initialise just its shard, and every layout gives the same
  // weights: element i of a unit depends only on (seed, unit, i)).
  static void init_unit(const ParamLayout& layout, int unit, uint64_t seed, int64_t begin, int64_t end,
                        T* out);

 private:
  struct Acts;
  ModelConfig cfg_;
  ParamLayout layout_;
  int Bmax_, Tmax_;
  int B_ = 0, Tn_ = 0;
  Precision prec_ = Precision::FP32;
  std::unique_ptr<Acts> a_;
};

// Index of the largest-probability token and sampling helpers live in
// sampler.hpp; they use probs().

}  // namespace zeropp
