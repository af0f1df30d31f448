// Inference weight sources: how a model pass outside training (generation,
// evaluation) gets the full weights of units the engine keeps sharded
// (zero.inference_weights, a WeightSource):
//  - "zero3": every acquire all-gathers the unit from the world, in
//    zero.comm_dtype (ZeRO-3: per layer per generated token);
//  - "full": refresh() gathers every unit once into an fp32 copy on every
//    rank; acquires send nothing and convert nothing (DeepSpeed-Chat's hybrid
//    engine: the actor's weights gathered once per generate call; memory 4
//    bytes per parameter per rank);
//  - "hpz": refresh() gathers each unit once and keeps this rank's part of
//    its hpZ group's copy (alpha ranks: zero.hpz_partition_size, or the
//    node when it is 0 or 1), in the comm dtype; acquires gather inside
//    the group only;
//  - "int8", "int4": refresh() builds a blockwise-quantized full copy of
//    every unit on every rank (one quantized all-gather; block
//    zero.weight_block); acquires dequantize it locally, sending nothing
//    (DeepSpeed's frozen-weights mixed-precision copy);
//  - "hpz+int8", "hpz+int4": the quantized copy partitioned over the hpZ
//    group; acquires gather it inside the group and dequantize.
// refresh() is collective and belongs at the start of every generate call
// (the master weights may have changed since). Acquires follow the model's
// forward schedule, with the next unit of the pass in flight. All bytes go
// through the Communicator: refresh as Purpose::Other, acquires as
// Purpose::FwdGather.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/runtime/device_buffer.hpp"
#include "src/comm/communicator.hpp"
#include "src/comm/topology.hpp"
#include "src/config/config.hpp"
#include "src/models/model.hpp"
#include "src/zero/quant_scheme.hpp"

namespace zeropp {

// What a zero.inference_weights value asks for.
struct InferenceRoute {
  bool group = false;  // per-use gathers inside the hpZ group (else the world, or none)
  int bits = 0;        // 8 or 4: a quantized copy; 0: the comm dtype, no copy
  bool full = false;   // an fp32 copy of every unit, gathered once
};
InferenceRoute inference_route(WeightSource source);

// The sizes of the buffers InferenceWeights allocates for units of padded[u]
// elements on P ranks with X per node (a pure function): the copy it holds and
// its two slots and staging. The generation estimate (src/memory/inference_memory.hpp) sums it.
struct InferencePlan {
  int alpha = 1;               // the route's group (1: none)
  std::vector<int64_t> held;   // per unit: bytes of the copy kept (0: none)
  int64_t full_floats = 0;     // per slot: the largest fp32 unit
  int64_t send = 0, wire = 0;  // per slot: bytes sent and received by a per-use gather
  int64_t stage_floats = 0;    // dequantization staging of the quantized routes
  static constexpr int kSlots = 2;
  int64_t bytes() const;
};
InferencePlan plan_inference_weights(const ZeroConfig& z, const std::vector<int64_t>& padded, int P, int X);

// One unit as the engine shards it: this rank's slice of the padded unit.
struct ShardedUnit {
  std::string name;
  int64_t numel = 0, padded = 0, slice = 0;
  const float* master = nullptr;  // slice fp32 values, the engine's
};

class InferenceWeights final : public UnitSource<float> {
 public:
  // Collective (builds the group). units and schedule: the engine's shards
  // and the model's forward schedule.
  InferenceWeights(const ZeroConfig& z, const Topology& topo, Communicator& comm,
                   std::vector<ShardedUnit> units, std::vector<int> schedule);
  ~InferenceWeights() override;

  const std::string& name() const { return name_; }
  int group_size() const { return alpha_; }
  // Collective: the per-call copy (hpZ partition, quantized copy) from the
  // current master weights; nothing for zero3.
  void refresh();
  // Bytes this source holds on this rank: the copy, and the per-use buffers.
  int64_t copy_bytes() const;
  int64_t buffer_bytes() const;

  CVec<float> acquire(int unit) override;
  void release(int unit) override;
  Vec<float> grad(int unit) override;  // inference only: a fatal error
  void grad_done(int unit) override;

 private:
  struct Slot {
    Buffer<uint8_t> send, wire;
    Buffer<float> full;
    Request req;
    int unit = -1;
    bool in_flight = false;
  };
  int64_t quant_elems(const ShardedUnit& u) const;  // one rank's slice, padded to whole blocks
  void start(Slot& s, int unit);
  void finish(Slot& s);
  void dequantize_all(const uint8_t* chunks, Slot& s);  // P packed chunks -> s.full
  Slot& slot(size_t position) { return slots_[position % InferencePlan::kSlots]; }

  const Topology& topo_;
  Communicator& comm_;
  InferenceRoute route_;
  std::string name_;
  DType wire_;
  QuantScheme q_;
  int alpha_ = 1;
  Group world_;
  std::unique_ptr<Group> group_;
  std::vector<ShardedUnit> units_;
  std::vector<int> schedule_;
  size_t pos_ = 0;
  std::vector<Buffer<uint8_t>> copy_;  // per unit: hpZ partition or quantized chunks
  Slot slots_[InferencePlan::kSlots];
  Buffer<float> stage_;  // quantization: one slice padded to whole blocks, or P dequantized ones
};

}  // namespace zeropp
