// The ZeRO-3 engine: sharded model states, gathered weights, reduced grads.
//
// Each unit's flat parameter buffer (param_layout.hpp) is padded to P equal
// slices (shard.hpp); rank r keeps slice r of the fp32 master weights, of the
// fp32 gradient and of Adam's two moments: 16 bytes per parameter over P.
// The engine is the model's UnitSource: acquire(u) all-gathers unit u in the
// communication dtype (bf16 or fp32) and returns it as fp32, with the next
// unit of the pass already in flight; grad_done(u) reduce-scatters the unit's
// full gradient (mean over ranks) into this rank's gradient shard. After the
// micro-batches of a step the global gradient norm is all-reduced, clipped,
// and AdamW updates the master shards. The engine decides where bytes travel
// and knows no layer math; with P = 1 every collective is a local copy.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "io/data_loader.hpp"
#include "kernels/common.hpp"
#include "src/communicator.hpp"
#include "src/config.hpp"
#include "src/model.hpp"
#include "src/topology.hpp"

namespace zeropp {

struct StepStats {
  double loss = 0;       // mean over micro-batches and ranks
  double grad_norm = 0;  // global, before clipping
  ByteCounters bytes;    // what this rank sent during the step
  double inter_node_bytes_all = 0;  // sent across nodes by all ranks (but the step's last all-reduce)
};

// Model-state memory of this rank, as the engine allocated it.
struct MemoryReport {
  int64_t master = 0, grad = 0, adam = 0;  // fp32 shards
  int64_t gather = 0;                      // the two full-unit slots (wire + fp32)
  int64_t grad_full = 0;                   // full-unit gradient buffers (current + tied embeddings)
  int64_t total() const { return master + grad + adam + gather + grad_full; }
};

class Engine final : private UnitSource<float> {
 public:
  Engine(const Config& cfg, const Topology& topo, Communicator& comm, GPT<float>& model);
  ~Engine() override;

  // GPT-2 initialisation of this rank's master shards (same weights on any P).
  void init_weights(uint64_t seed);

  // One optimizer step over A micro-batches of `loader` at learning rate lr.
  StepStats train_step(int64_t step, const DataLoader& loader, double lr);

  // Mean validation loss over `batches` micro-batches per rank.
  double eval_loss(const DataLoader& val, int batches);

  // Next-token probabilities [V] after `context` (collective: every rank
  // passes the same context).
  std::vector<float> next_token_probs(const std::vector<int32_t>& context);

  // The full fp32 master weights of unit u (collective; tests and checks).
  std::vector<float> gather_master(int unit);

  MemoryReport memory() const;
  int64_t parameters() const { return model_.layout().numel; }

 private:
  CVec<float> acquire(int unit) override;
  void release(int unit) override;
  Vec<float> grad(int unit) override;
  void grad_done(int unit) override;

  struct Impl;
  const Config& cfg_;
  GPT<float>& model_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zeropp
