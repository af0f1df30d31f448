// The generation phase of `zeropp rlhf`: B prompts, each continued by Tc
// sampled tokens, and the per-token log-probabilities of the sampled tokens
// that the policy-gradient update needs.
//
// The generator only needs a function that returns next-token probabilities
// for every prefix of a batch (Engine::probs: a full forward per new token,
// every gather as in training). A KV-cache decoder can replace it behind the
// same call without touching the loop.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/common.hpp"

namespace zeropp {

// Next-token probabilities [B, Tn, V] after each prefix of B rows of Tn tokens.
using PrefixProbs = std::function<CVec<float>(const std::vector<int32_t>& tokens, int B, int Tn)>;

// Appends Tc tokens to each of the B prompts [B, Tp]: row b's token t is
// drawn from the model's distribution at `temperature` (p^(1/temperature),
// renormalised) with a uniform number that depends only on (seed, b, t), so a
// rerun or a resume draws the same. Returns [B, Tp+Tc].
std::vector<int32_t> sample_completions(const PrefixProbs& probs, const std::vector<int32_t>& prompts, int B,
                                        int Tp, int Tc, double temperature, uint64_t seed);

// From probabilities p [B, Tn, V] over rows of Tn = Tp+Tc-1 input tokens:
// log p of each completion token (the last Tc of the row's Tp+Tc tokens in
// `seqs`) at the position that predicts it. Returns [B, Tc].
std::vector<double> completion_log_probs(CVec<float> p, const std::vector<int32_t>& seqs, int B, int Tp,
                                         int Tc);

// A uniform number in [0, 1) from a 64-bit key (SplitMix64's finaliser).
double uniform_from(uint64_t key);

}  // namespace zeropp
