// The model interface: all the engine, the training loop, checkpoints and
// tools know of a model family (src/models/README.md says how to add one).
//
// A model computes on one device over full weights it is handed unit by unit
// through a UnitSource; it never owns its parameters and never talks to MPI.
// It describes itself (ModelDescription): its units and parameters, the units
// whose gradient gathers contributions from more than one place in the
// backward (tied parameters, declared, never assumed), and the key -> value
// list that decides whether a checkpoint holds the same model.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/runtime/common.hpp"
#include "src/base/precision.hpp"
#include "src/config/config.hpp"
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

struct ModelDescription {
  std::string family;  // "gpt2", "llama"
  ParamLayout layout;  // units and parameters (names are the checkpoint's tensor names)
  // Units whose gradient accumulates over more than one stretch of the
  // backward (e.g. tied embeddings: the LM head first, the encoder last), so
  // grad(u) of other units is called before grad_done(u). The engine keeps a
  // full-size gradient buffer of its own for each.
  std::vector<int> shared_units;
  // What makes two models the same for a resume: ("family", "gpt2"),
  // ("n_layer", "4"), ... in a fixed order.
  std::vector<std::pair<std::string, std::string>> identity;

  bool shared(int unit) const;
};

// "n_layer: 4 -> 6; family: gpt2 -> llama" for what differs ("" when nothing).
std::string identity_differences(const ModelDescription& was, const ModelDescription& now);

// A decoder family's description: its name, layout and the identity keys
// every decoder has (family, vocab_size, max_seq_len, n_layer, n_head,
// n_embd); the family adds its own keys and shared units.
ModelDescription decoder_description(const std::string& family, const ModelConfig& m, ParamLayout layout);

// The unit numbers the decoder families share: the embeddings, one unit per
// block, then the final norm (each family's layout header says what follows).
namespace decoder_units {
constexpr int kEmbeddings = 0;
inline int block_unit(int layer) { return 1 + layer; }
inline int final_norm_unit(const ModelConfig& m) { return m.n_layer + 1; }
}  // namespace decoder_units

template <class T>
class Model {
 public:
  virtual ~Model() = default;
  virtual const ModelDescription& describe() const = 0;
  const ParamLayout& layout() const { return describe().layout; }

  // The units in the order the model acquires them in each pass. The engine
  // prefetches along it; when the forward's last unit is the backward's
  // first, the engine keeps it gathered across the two.
  virtual std::vector<int> unit_schedule(Pass pass) const = 0;

  // Runs B×Tn tokens (B <= max B, Tn <= Tmax), in device memory like every
  // view (the engine copies them there). With targets (B×Tn), returns the
  // mean cross-entropy; without (empty), returns 0 and leaves the next-token
  // probabilities for probs(). Keeps what backward needs.
  virtual double forward(CVec<int32_t> tokens, CVec<int32_t> targets, int B, int Tn, UnitSource<T>& src) = 0;

  // Backward of the last forward (which must have had targets). dloss
  // scales the gradient of the summed per-token losses: 1/(B·Tn) gives the
  // gradient of the mean; 1/(B·Tn·A) averages over A accumulated micro-batches.
  virtual void backward(T dloss, UnitSource<T>& src) = 0;

  // Probabilities [B, Tn, V] after a forward without targets (the buffer for
  // them is allocated by the first such forward and counted in decode_bytes()),
  // in device memory: a host reader copies them (copy_to_host, as
  // src/generate/generate.cpp and rollout.cpp do).
  virtual CVec<T> probs() const = 0;
  // Per-token losses -log p(target) [B, Tn] after a forward with targets
  // (unweighted), valid until the next forward.
  virtual CVec<T> token_losses() const = 0;

  // Generation with a KV cache. decode_reset(B) starts B <= Bmax new
  // sequences with empty caches (the caches and their scratch, sized for
  // B×Tmax, are allocated by the first call and grown by one with a larger B;
  // decode_bytes() says how much, with probs()'s buffer).
  // decode() then runs tokens [B, Tn] (device memory) at positions pos..pos+Tn-1 of every
  // sequence (pos: the tokens decoded since the reset, the same for all B;
  // pos + Tn <= Tmax): a prompt's prefill is one call with Tn = its length,
  // each later token a call with Tn = 1. It appends every layer's keys and
  // values of the new tokens to the cache and returns the LOGITS [B, V] of
  // each sequence's last new position (the next token's, before softmax),
  // in device memory like probs(), valid until the next call. It acquires and releases units in
  // unit_schedule(Pass::Forward) order, as forward() does, and computes the
  // same logits as forward() over all pos + Tn tokens would at those positions.
  virtual void decode_reset(int B) = 0;
  virtual CVec<T> decode(CVec<int32_t> tokens, int B, int Tn, int pos, UnitSource<T>& src) = 0;
  virtual int64_t decode_bytes() const = 0;

  // Bytes of the activation and scratch buffers allocated for Bmax×Tmax.
  virtual int64_t activation_bytes() const = 0;

  // Initial weights from `seed`: elements [begin, end) of unit `unit`'s flat
  // buffer into `out` (each rank initialises just its shard; element i of a
  // unit depends only on (seed, unit, i), so every layout gives the same).
  virtual void init_unit(int unit, uint64_t seed, int64_t begin, int64_t end, T* out) const = 0;

  // Operand precision of the matrix products (train.precision): fp32, or
  // bf16 with fp32 accumulation (kernels/ops/matmul.hpp); BF16 needs T = float.
  void set_precision(Precision p) { prec_ = p; }
  Precision precision() const { return prec_; }

  // Per-token weights [B·Tn] of the losses of the forwards and backwards that
  // follow (policy gradients weight each sampled token by its advantage):
  // forward returns sum_n w_n·loss_n / (B·Tn) and backward differentiates
  // that sum. Empty (the default): every weight 1, the plain loss, computed
  // exactly as without weights.
  void set_loss_weights(std::vector<T> w) { loss_weights_ = std::move(w); }

  // Whether a backward follows the forwards with targets (the default). The
  // decoder families run their LM head's backward inside such a forward
  // (decoder.hpp); forwards for a loss alone (validation) turn it off and
  // skip that work. backward() after such a forward is a caller's bug.
  void set_backward_follows(bool b) { backward_follows_ = b; }

 protected:
  Precision prec_ = Precision::FP32;
  std::vector<T> loss_weights_;
  bool backward_follows_ = true;
};

// The families of model.family (src/models/model.cpp's table).
ModelDescription describe_model(const ModelConfig& m);
template <class T>
std::unique_ptr<Model<T>> make_model(const ModelConfig& m, int B, int Tmax);
// Bytes activation_bytes() will report for B×T on a Model<float>, from the
// family's activation plan (src/models/activation_plan.hpp), without allocating them.
int64_t model_activation_bytes(const ModelConfig& m, int B, int T);
// Bytes decode_bytes() will report after decode_reset(B) on a Model<float>
// built for Tmax positions (the KV cache and the decode scratch), and the
// probabilities' buffer [Bmax, Tmax, V] that the first forward without
// targets adds to it.
int64_t model_decode_bytes(const ModelConfig& m, int B, int Tmax);
int64_t model_probs_bytes(const ModelConfig& m, int Bmax, int Tmax);
// Forward FLOPs per token at sequence length seq_len (2 per multiply-add;
// training is 3x this).
double forward_flops_per_token(const ModelConfig& m, int seq_len);

}  // namespace zeropp
