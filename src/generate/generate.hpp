// Text generation with the KV cache: a batch of prompts through
// Model::decode, one prefill and then one token per step, whatever serves the
// weights (the engine's inference_pass on P ranks, full weights in tests).
// Knows no ranks: every rank that runs it with the same prompts and coin
// stream computes the same logits and so draws the same tokens.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "src/generate/sampler.hpp"
#include "src/models/model.hpp"

namespace zeropp {

// Runs f with the weights served (one pass in unit_schedule(Forward) order).
using PassRunner = std::function<void(const std::function<void(UnitSource<float>&)>&)>;
// Told each new token of sequence `seq` as soon as it is chosen.
using TokenSink = std::function<void(int seq, int32_t token)>;

// The longest prompt plus max_new new tokens must fit the model's context:
// every token but the last new one is fed, so longest + max_new - 1 <= context.
// Error naming the numbers otherwise, and for an empty prompt.
void check_generation_fits(const std::vector<std::vector<int32_t>>& prompts, int max_new, int context);

// KVCache: Model::decode, the new tokens only. Recompute: the whole sequence
// through Model::forward for every token, as the sampler before the KV cache
// did (kept to measure what the cache saves: `generate --recompute`).
enum class Decoding { KVCache, Recompute };

// Generates max_new tokens after each prompt (prompts.size() <= the model's
// batch). All sequences share the cache's positions: the prefill runs the
// shortest prompt's length, and longer prompts feed their remaining tokens one
// step at a time while the others already generate. Coins are drawn, in
// sequence order, only for tokens that are sampled. Returns the new tokens.
std::vector<std::vector<int32_t>> generate(Model<float>& model, const PassRunner& run,
                                           const std::vector<std::vector<int32_t>>& prompts, int max_new,
                                           const SamplingRule& rule, CoinStream& coins, const TokenSink& sink,
                                           Decoding mode = Decoding::KVCache);

}  // namespace zeropp
