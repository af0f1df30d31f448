// The generation phase of `zeropp rlhf`: B prompts, each continued by Tc
// sampled tokens (src/generate/generate.hpp: the KV cache, the shared sampling
// rules), and the per-token log-probabilities of the sampled tokens that the
// policy-gradient update needs.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/runtime/common.hpp"
#include "src/generate/generate.hpp"

namespace zeropp {

// Appends Tc tokens to each of the B prompts [B, Tp], drawn at `temperature`
// (softmax(logits / temperature)) with a coin stream seeded by `seed`, so a
// rerun or a resume draws the same. Collective through `run` (every rank
// runs the same number of passes). Returns [B, Tp+Tc].
std::vector<int32_t> sample_completions(Model<float>& model, const PassRunner& run,
                                        const std::vector<int32_t>& prompts, int B, int Tp, int Tc,
                                        double temperature, uint64_t seed);

// From the per-token losses [B, Tn] of rows of Tn = Tp+Tc-1 input tokens
// whose targets are the next tokens (Engine::token_losses): log p of each
// completion token (the last Tc of the row's Tp+Tc) at the position that
// predicts it. Returns [B, Tc].
std::vector<double> completion_log_probs(CVec<float> losses, int B, int Tp, int Tc);

}  // namespace zeropp
