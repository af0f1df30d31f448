// The engine's memory for a model's states on one rank, planned from the
// configuration and the model's units alone (a pure function): the engine
// allocates its shards, gather slots, gradient buffers, hpZ copies and qgZ
// staging from this plan (engine.cpp, qgz.cpp), and the memory estimate
// (src/memory/memory_estimate.hpp) sums it before anything is allocated, so
// the two are one computation. Engine::memory() reports what was allocated;
// the memory_np* tests hold it equal to the plan's report.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "src/config/config.hpp"
#include "src/models/model.hpp"
#include "src/zero/qgz.hpp"

namespace zeropp {

// Model-state memory of this rank, in bytes.
struct MemoryReport {
  int64_t master = 0, grad = 0, adam = 0;  // fp32 shards
  int64_t gather = 0;                      // the prefetch_depth + 1 full-unit slots (wire + fp32)
  int64_t grad_full = 0;  // full-unit gradient buffers (current (2 with overlap) + shared), reduced slice
  int64_t secondary = 0;  // hpZ: 2Ψ/α in bf16
  int64_t qgz = 0;        // qgZ staging and error-feedback buffers
  int64_t total() const { return master + grad + adam + gather + grad_full + secondary + qgz; }
};

struct StatePlan {
  bool frozen = false;               // no gradients, Adam moments or qgZ staging
  int alpha = 1;                     // hpZ's group (1: no secondary copies)
  int64_t align = 1;                 // units are padded to P·align (unit_align)
  std::vector<int64_t> padded;       // per unit: elements, padded to P·align
  std::vector<int64_t> slice;        // per unit: this rank's elements of master, gradient and moments
  std::vector<int64_t> secondary;    // per unit: bytes of hpZ's copy (0 without hpZ)
  int slots = 1;                     // gather slots (prefetch_depth + 1)
  int64_t slot_floats = 0;           // per slot: the gathered fp32 unit
  int64_t slot_wire = 0;             // per slot: bytes received (bf16 or qwZ's chunks; 0 with an f32 wire)
  std::vector<int64_t> shared_grad;  // per unit: floats of a shared unit's own gradient (0: not shared)
  int unit_grads = 0;                // full-unit gradient buffers (2 with overlap) ...
  int64_t unit_grad_floats = 0;      // ... of the largest unshared unit
  int64_t reduced_floats = 0;        // this rank's reduced slice
  std::optional<QgzBuffers> qgz;     // qgZ's staging and error feedback (zero.quantized_gradients)
  MemoryReport report() const;
};

// qgZ's settings from the deck (zero.gradient_block, the bits, error feedback).
QgzSettings qgz_settings(const ZeroConfig& z);

// The plan for `desc`'s units on P ranks with X per node; refuses an hpZ size
// that does not divide P (hpz_group_size).
StatePlan plan_states(const ZeroConfig& z, const ModelDescription& desc, int P, int X, bool frozen);

}  // namespace zeropp
