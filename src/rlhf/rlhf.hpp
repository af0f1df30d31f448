// `zeropp rlhf DECK`: a small RLHF loop on the sharded engine.
//
// Actor: the training engine (ZeRO-3 / ZeRO++ shards, AdamW at rlhf.lr).
// Reference: a frozen copy of the actor's starting weights in a second
// engine over the same ranks, kept sharded and gathered int8-quantized
// (qwZ), never stepped; it only scores the sampled tokens. Both start from
// rlhf.init_from (a pretraining checkpoint), so the actor writes text.
// Each iteration, on every rank: cut rlhf.batch_size prompts of
// rlhf.prompt_len tokens from the prompt corpus (the data loader's windows
// of that iteration), sample rlhf.completion_len tokens after each
// (src/rlhf/rollout.hpp), score them (src/rlhf/reward.hpp), and take one
// REINFORCE step with a baseline and a per-token KL penalty
// (src/rlhf/policy_gradient.hpp) as a weighted cross-entropy through
// Engine::train_step. The log line and metrics.h5 row of each iteration
// carry the mean reward, the mean per-token KL and DeepSpeed-Chat's time
// breakdown (gather, generate, train, other) with samples/s. Checkpoints
// and --resume work as in training (the reference is rebuilt from
// rlhf.init_from on resume).
#pragma once

#include <string>

#include "src/config/config.hpp"
#include "src/memory/memory_estimate.hpp"

namespace zeropp {

// The engine's view of an rlhf deck: micro-batches of rlhf.batch_size rows
// of prompt_len + completion_len - 1 input tokens, one per step,
// rlhf.iterations steps, prompts from rlhf.prompts (or data.train), no validation.
Config rlhf_engine_config(const Config& cfg);

// The reference's engine: the actor's layout, weights gathered int8-quantized
// (it is never stepped, so no gradient compression applies).
Config rlhf_reference_config(const Config& e);

// Per-rank memory of an rlhf run (e: rlhf_engine_config's) on P ranks in
// nodes of X: the actor's as in training, plus its rollouts' KV cache, plus
// the whole frozen reference (engine and model). Scoring reads per-token
// losses (Engine::token_losses): no [B, T, V] probabilities.
MemoryEstimate estimate_rlhf_memory(const Config& e, int P, int X);

// Returns the process exit status. Collective over MPI_COMM_WORLD; resume
// and overwrite as in run_training.
int run_rlhf(const Config& cfg, const std::string& deck_path, const std::string& resume, bool overwrite);

}  // namespace zeropp
