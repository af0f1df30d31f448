// Text generation from a trained model: temperature-1 sampling of byte-level
// tokens. It needs only a function that returns the next-token probabilities
// for a context, so it knows nothing of engines or ranks; with the same seed
// every rank draws the same tokens.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace zeropp {

// Probabilities [V] of the token after `context`.
using NextTokenProbs = std::function<std::vector<float>(const std::vector<int32_t>& context)>;

// Appends n_tokens tokens to the prompt's bytes; the context fed to the model
// is the last max_context tokens.
std::vector<int32_t> sample_tokens(const NextTokenProbs& next, const std::string& prompt, int n_tokens,
                                   int max_context, uint64_t seed);

// Bytes for ids < 256, "<id>" otherwise; control characters but newline and
// tab shown as '?', so a sample never garbles a terminal.
std::string decode_bytes(const std::vector<int32_t>& tokens);

// Index drawn from probabilities `p` with a uniform number `coin` in [0, 1).
int sample_index(const std::vector<float>& p, double coin);

}  // namespace zeropp
