// Per-rank memory of `zeropp generate`, from the configuration alone, before
// anything is allocated (eval needs only estimate_frozen_memory's): the
// frozen engine and the model's buffers as for training, plus what
// generation adds: the KV cache and the decode scratch (or, recomputing the
// forward per token, the probabilities' buffer) and zero.inference_weights'
// copy and per-use buffers. tests/memory/test_inference_memory.cpp holds each
// equal to what the model and InferenceWeights allocate.
#pragma once

#include <cstdint>

#include "src/config/config.hpp"
#include "src/generate/generate.hpp"
#include "src/memory/memory_estimate.hpp"

namespace zeropp {

// Bytes InferenceWeights holds on each of P ranks in nodes of X for the
// model `m` sharded as zero `z` says (copy_bytes() + buffer_bytes()). An hpZ
// group that does not divide P counts as none (InferenceWeights refuses it).
int64_t inference_weights_bytes(const ZeroConfig& z, const ModelConfig& m, int P, int X);

// generate with cfg.train.batch_size prompts at a time over a model built
// for cfg.train.seq_len positions, decoding as `mode` says.
MemoryEstimate estimate_generate_memory(const Config& cfg, int P, int X, Decoding mode);

}  // namespace zeropp
