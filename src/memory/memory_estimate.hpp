// Per-rank memory of a run, computed from the configuration alone, before
// anything is allocated (so a run that cannot fit is refused with one line
// instead of an allocation failure or the OOM killer).
//
// The numbers are the sizes the engine and the model allocate: model states
// (Engine::memory() once built) and the model's activations and backward
// scratch for B×T tokens; tests/memory/test_memory_estimate.cpp holds them
// equal. Not counted: the process itself (libraries, MPI and BLAS buffers;
// already in use when the node's free memory is read) and the data loaders.
#pragma once

#include <cstdint>
#include <string>

#include "src/config/config.hpp"
#include "src/zero/engine.hpp"

namespace zeropp {

struct MemoryEstimate {
  MemoryReport states;              // as Engine::memory() will report it
  int64_t activations = 0;          // the model's buffers for B×T tokens and the engine's token buffers
  int64_t decode = 0;               // generation: KV cache and decode scratch, the probabilities' buffer
  int64_t inference_weights = 0;    // generate: zero.inference_weights' copy and per-use buffers
  int64_t reference = 0;            // rlhf: the frozen reference engine and its model, all of it
  int64_t checkpoint_snapshot = 0;  // checkpoint.async: host copies of the weights, moments, error feedback
  // The keys that size the activations (the refusal names them).
  std::string batch_keys = "train.batch_size or train.seq_len";
  int64_t total() const {
    return states.total() + activations + decode + inference_weights + reference + checkpoint_snapshot;
  }
};

// Bytes of the model's activations and backward scratch for B sequences of
// T tokens (make_model(m, B, T) allocates exactly this), plus the engine's
// input and target token buffers.
int64_t activation_bytes(const ModelConfig& m, int B, int T);

// "layer: activations 1.20 MiB (none 4.80 MiB)" for the start-up table: the
// deck's model.recompute policy and what each other one costs at B×T.
std::string recompute_summary(const ModelConfig& m, int B, int T);

// Per-rank memory of training `cfg` on P ranks in nodes of X. An hpZ group
// size that does not divide P counts as hpZ off (the engine refuses it).
MemoryEstimate estimate_memory(const Config& cfg, int P, int X);
// The same for a frozen engine (Engine(..., frozen = true): no gradients,
// no Adam moments, no qgZ staging) and its model.
MemoryEstimate estimate_frozen_memory(const Config& cfg, int P, int X);

}  // namespace zeropp
