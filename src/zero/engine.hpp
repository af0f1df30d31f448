// The ZeRO-3 / ZeRO++ engine: sharded model states, gathered weights,
// reduced gradients.
//
// Each unit's flat parameter buffer (the model's description, model.hpp) is padded to P equal
// slices (shard.hpp); rank r keeps slice r of the fp32 master weights, of the
// fp32 gradient and of Adam's two moments: 16 bytes per parameter over P.
// The engine is the model's UnitSource: acquire(u) all-gathers unit u in the
// communication dtype (bf16 or fp32) and returns it as fp32, with the next
// unit of the pass already in flight (zero.prefetch_depth units ahead);
// grad_done(u) reduce-scatters the unit's full gradient (mean over ranks)
// into this rank's gradient shard — with zero.overlap the reduction stays in
// flight during the next unit's backward and completes at the next
// grad_done, before its buffer is reused, or before the step's norm. After the
// micro-batches of a step the global gradient norm is all-reduced, clipped,
// and AdamW updates the master shards unit by unit, in the order the next
// forward uses them; with zero.overlap each unit's first gathers of the next
// step start as soon as it is updated (engine_update.cpp). The engine decides where bytes travel
// and knows no layer math; with P = 1 every collective is a local copy.
// It knows the model only through model.hpp: units, their sizes and names,
// the order each pass acquires them, and which units are shared (their
// gradient gets its own full-size buffer, reduced once complete). The
// training loop fetches the data and hands the engine tokens.
//
// ZeRO++ (each independent):
//  - qwZ: the forward and the backward gather each rank's slice quantized
//    blockwise (int8 or int4, one fp32 scale per block) in one packed buffer
//    [payload | scales] (16-byte aligned, QuantScheme::packed_bytes), dequantized
//    once on arrival and rounded to the communication dtype. The same master
//    slice always gives the same payload, so the forward and the backward of
//    a step, and both uses of a shared unit, see the same weights on
//    every route (zero.quantized_weights_backward = false: the backward
//    gathers unquantized, as before);
//  - hpZ: a secondary partition over groups of alpha consecutive ranks: the
//    slice of the forward's full unit (as the compute used it) that this rank
//    holds in its group, kept in the communication dtype; backward gathers,
//    and forwards of micro-batches after the first, gather inside the group
//    only. Secondaries are invalidated at the start and end of every step
//    (validation and sampling between steps never change what a step sends)
//    and whenever weights are set;
//  - qgZ: gradients reach their owners through qgz.hpp's two-hop all-to-all.
// Units are padded to a multiple of P·block (block: the largest active
// quantization block, zero_layout.hpp), so every slice is a whole number of blocks.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "kernels/runtime/common.hpp"
#include "src/base/tensor_shard.hpp"
#include "src/comm/communicator.hpp"
#include "src/comm/topology.hpp"
#include "src/config/config.hpp"
#include "src/models/model.hpp"
#include "src/zero/inference_weights.hpp"
#include "src/zero/state_plan.hpp"

namespace zeropp {

struct StepStats {
  double loss = 0;                  // mean over micro-batches and ranks
  double grad_norm = 0;             // global, before clipping
  ByteCounters bytes;               // what this rank sent during the step
  double inter_node_bytes_all = 0;  // sent across nodes by all ranks (but the step's last all-reduce)
};

// One micro-batch: B×T input tokens and the B×T tokens that follow them,
// and optionally a weight per token's loss (Model::set_loss_weights; empty: all 1).
struct MicroBatch {
  std::vector<int32_t> tokens, targets;
  std::vector<float> weights;
};

class Engine final : private UnitSource<float> {
 public:
  // frozen: weights that are never stepped (rlhf's reference, generate,
  // eval): no gradient shards, full-unit gradient buffers, qgZ staging or
  // Adam moments are allocated, and train_step and gather_grad refuse.
  Engine(const Config& cfg, const Topology& topo, Communicator& comm, Model<float>& model,
         bool frozen = false);
  ~Engine() override;

  // The model's initialisation of this rank's master shards (same weights on any P).
  void init_weights(uint64_t seed);

  // Units padded to (a multiple of P·align): what each rank's slice tiles.
  int64_t align() const;
  // Padded size of unit u.
  int64_t padded(int unit) const;
  // hpZ group size alpha (1: hpZ off).
  int hpz_size() const;

  // One optimizer step over this rank's A = micro.size() micro-batches at
  // learning rate lr (the gradient is the mean over them and over ranks).
  StepStats train_step(int64_t step, const std::vector<MicroBatch>& micro, double lr);

  // Mean validation loss over `batches` (the same number on every rank).
  double eval_loss(const std::vector<MicroBatch>& batches);

  // One model pass outside training (generation, scoring) with the engine
  // serving the weights: f runs the model's calls (e.g. Model::decode) on the
  // source it is handed, acquiring units in unit_schedule(Forward) order
  // (collective: every rank calls it with the same work).
  void inference_pass(const std::function<void(UnitSource<float>&)>& f);
  // Per-token losses -log p(target) [B·T] of one micro-batch of B×T tokens
  // (a forward with targets, the LM head's chunks: no [B, T, V] buffer),
  // valid until the next forward (collective).
  CVec<float> token_losses(const MicroBatch& mb);
  // Next-token probabilities [B, Tn, V] after each prefix of B sequences of
  // Tn tokens (B <= train.batch_size, Tn <= train.seq_len), valid until the
  // next forward (collective: every rank passes the same B and Tn).
  CVec<float> probs(const std::vector<int32_t>& tokens, int B, int Tn);

  // The full fp32 master weights of unit u, or the mean gradient of the last
  // step (before clipping) (collective; tests, checks and benches).
  std::vector<float> gather_master(int unit);
  std::vector<float> gather_grad(int unit);
  // Tests: w is called with the n fp32 weights of every unit the model
  // acquires, in the pass it acquires them (an empty function: off).
  using WeightWatcher = std::function<void(Pass pass, int unit, const float* w, int64_t n)>;
  void watch_weights(WeightWatcher w);

  // Views of this rank's model states as pieces of the logical tensors, for
  // checkpoints: groups "model", "optimizer/exp_avg", "optimizer/exp_avg_sq"
  // (each rank its own flat ranges, padding excluded), plus
  // "error_feedback" when qgZ keeps error-feedback buffers (per rank; they
  // are only meaningful on the same layout, see error_feedback_layout()).
  ShardGroups checkpoint_shards(bool with_error_feedback);
  // The layout the error-feedback buffers belong to ("" without them; zero_layout.hpp).
  std::string error_feedback_layout() const;
  // The master weights (and moments) were overwritten: hpZ secondaries and
  // anything gathered from the old weights are stale.
  void weights_loaded();

  // Collective: a weight source for passes outside training, served from
  // this rank's master shards as zero.inference_weights says
  // (inference_weights.hpp); refresh() it whenever the weights changed.
  std::unique_ptr<InferenceWeights> inference_weights();

  MemoryReport memory() const;
  int64_t parameters() const { return model_.layout().numel; }

  // For tests: this rank's fp32 gradient shard of unit u (padding included),
  // and the fp32 weights of unit u as `pass` would receive them from a
  // gather right now (quantized, from hpZ secondaries, ...).
  std::vector<float> grad_shard(int unit) const;
  std::vector<float> gathered(int unit, Pass pass);

 private:
  CVec<float> acquire(int unit) override;
  void release(int unit) override;
  Vec<float> grad(int unit) override;
  void grad_done(int unit) override;
  // Runs the forward of one micro-batch; the loss.
  double forward_batch(const MicroBatch& mb);

  struct Impl;
  const Config& cfg_;
  Model<float>& model_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zeropp
