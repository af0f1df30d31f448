// Engine::Impl: the engine's state, shared by engine.cpp (set-up, the step,
// checkpoints), engine_gather.cpp (gathers, prefetch, hpZ secondaries) and
// engine_reduce.cpp (gradient buffers and their reduction). Private to src/zero.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/runtime/device_buffer.hpp"
#include "src/zero/engine.hpp"
#include "src/zero/kernel_progress.hpp"
#include "src/zero/optimizer.hpp"
#include "src/zero/qgz.hpp"
#include "src/zero/quant_scheme.hpp"
#include "src/zero/shard.hpp"
#include "src/zero/zero_layout.hpp"

namespace zeropp {

// This rank's share of one unit.
struct UnitShard {
  std::string name;
  int64_t numel = 0, padded = 0, slice = 0;
  Span mine;  // [r·slice, (r+1)·slice) in padded coordinates
  Buffer<float> master, grad, m, v;
  std::vector<DecaySegment> segments;
  // hpZ: this rank's part of the group's copy, in the comm dtype
  Buffer<uint8_t> secondary;
  bool secondary_valid = false;
};

// How a slot's gather travels, and so how it is decoded on arrival. Local:
// the world's bf16 gather at P = 1, decoded from the master itself.
enum class Route { World, Quantized, Group, Local };

// A full-unit buffer: what arrives on the wire and its fp32 copy.
struct Slot {
  Buffer<uint8_t> wire;  // this rank's slice is written in place: no send buffer
  Buffer<float> full;
  Request req;
  Route route = Route::World;
  int unit = -1;
  bool in_flight = false;
};

struct Engine::Impl {
  const Topology& topo;
  Communicator& comm;
  const ZeroConfig& z;
  Group world;
  std::unique_ptr<Group> hpz;  // null: hpZ off
  int alpha = 1;
  DType wire;
  int64_t align = 1;
  std::vector<UnitShard> units;
  std::vector<Slot> slots;  // prefetch_depth + 1
  std::unique_ptr<QgzReducer> qgz;
  // the pass being run: which unit each position acquires, and where
  Pass pass = Pass::Forward;
  std::vector<int> schedule;
  size_t pos = 0;
  size_t next_start = 0;  // the first position whose gather has not been started
  int slot_of_pos0 = 0;
  // full weights still valid in a slot after the forward (a unit that ends
  // the forward and starts the backward, e.g. tied embeddings): no second gather
  int resident_unit = -1, resident_slot = -1;
  // full-size gradient buffers: one per shared unit (it lives through the
  // backward; empty for the others), and for the other units one (overlap
  // off) or two: the next unit's backward fills one while the other is reduced
  std::vector<Buffer<float>> grad_shared;
  std::vector<Buffer<float>> grad_cur;
  std::vector<Buffer<float>*> grad_of;  // per unit: its buffer while live
  size_t next_cur = 0;                  // the grad_cur buffer the next unit takes
  std::vector<bool> grad_live;
  Buffer<float> reduced;  // this rank's slice of a reduced gradient
  // The one gradient reduction in flight (overlap): its unit (-1: none), the
  // full-size buffer it reads, and the reduce-scatter (qgZ keeps its own state).
  struct PendingReduce {
    int unit = -1;
    const Buffer<float>* in = nullptr;
    Request req;
  } pending;
  // Collectives progress between the model's kernels (overlap), only while
  // the model computes: never inside the engine's own work.
  std::unique_ptr<KernelProgress> kernel_progress;
  bool model_running = false;
  bool frozen = false;  // never stepped: no gradient buffers, no Adam moments
  Buffer<int32_t> inputs, targets;
  WeightWatcher watch;  // tests: sees every unit's weights as handed to the model
  // Cross-step prefetch (overlap, prefetch_depth >= 1): as soon as the step's
  // optimizer has updated a unit, the next forward's first positions that
  // gather it start (slots [0, carried), one per position; their bytes count
  // in the next step). The next training step's forward takes them over
  // (begin_pass); any other pass (validation, generation, tests), and any
  // change of the master weights, completes and drops them first.
  std::vector<int> forward;                      // the model's forward schedule
  std::vector<int> update_order;                 // units in the order of their first forward use
  size_t carried = 0;                            // positions of `forward` gathered ahead of the next step
  std::unique_ptr<DeviceAccess> carried_access;  // open while they are in flight between steps
  bool training = false;                         // inside train_step
  std::vector<double> unit_norm2;                // per unit: squared norm of this rank's gradient shard

  Impl(const Topology& t, Communicator& c, const ZeroConfig& zc)
      : topo(t), comm(c), z(zc), world(Group::world(t)), wire(wire_dtype(zc)) {}

  int64_t wire_size(int64_t n) const { return bytes_of(wire, n); }
  int64_t quant_chunk(int64_t slice) const {  // qwZ: one rank's [payload | scales], aligned
    return weight_scheme(z).packed_bytes(slice);
  }
  // A byte buffer that holds bf16 values, as a kernel argument.
  static Vec<uint16_t> bf16_view(const Buffer<uint8_t>& b) {
    return Vec<uint16_t>(reinterpret_cast<uint16_t*>(b.data()), b.size() / 2);
  }
  int slot_for(size_t position) const { return int((size_t(slot_of_pos0) + position) % slots.size()); }

  // Gathers (engine_gather.cpp).
  void start_gather(size_t position);
  // Turns what arrived in slot s into fp32 weights in s.full.
  void decode(Slot& s);
  // hpZ: keep this rank's part of the forward's full unit, in the comm dtype:
  // exactly the weights the compute used (decode() made them representable).
  void fill_secondary(UnitShard& us, const Slot& s);
  void invalidate_secondaries();
  void begin_pass(Pass p, const std::vector<int>& sched);
  // MPI progresses our rings only inside MPI calls: poke the prefetches and
  // the gradient reduction at every unit boundary (and, with overlap, between
  // kernels) so that their hops advance while the model computes.
  void progress();
  // Starts the gathers of positions up to `last` (clamped to the pass).
  void start_through(size_t last);
  CVec<float> acquire(int u);
  void release(int u);

  // Cross-step prefetch: starts the carried positions that gather unit u (its
  // master weights are final for the next step); drops them (completed).
  void start_carried(int u);
  void drop_carried();

  // The step's end (engine_update.cpp): the global gradient norm, clipping and
  // AdamW unit by unit, with the last reduction and the next step's first
  // gathers in flight; fills the loss (in: this rank's mean), norm and bytes.
  void update(StepStats& st, double loss, const OptimConfig& o, double lr, int64_t step, bool next_step);

  // Gradient reduction (engine_reduce.cpp).
  Vec<float> grad(int u);

  // The reduction of the previous unit completes (it had this unit's backward
  // to progress under), then this unit's starts; overlap off: it completes here.
  void grad_done(int u);
  // Completes the reduction in flight and adds its mean over ranks to the
  // unit's gradient shard (in the order the reductions started: the same
  // sums as reducing in place).
  void finish_reduce();

  // While alive, the model is computing: polls between its kernels advance
  // the collectives. Inside the engine's own work (nested), they do not.
  struct Computing {
    Impl& I;
    bool before;
    Computing(Impl& i, bool on) : I(i), before(i.model_running) { I.model_running = on; }
    ~Computing() { I.model_running = before; }
  };
};

}  // namespace zeropp
