// The sampling rules of text generation, as pure functions of one position's
// next-token logits and a uniform number: greedy (temperature 0), or a draw
// from softmax(logits / temperature) cut to the top-k tokens and then to the
// nucleus of probability top-p. Every rank that passes the same logits and the
// same coin stream draws the same token.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zeropp {

struct SamplingRule {
  double temperature = 1.0;  // 0: greedy
  int top_k = 0;             // keep the k most probable tokens (0: all)
  double top_p = 1.0;        // then the fewest most probable whose mass reaches top_p, in (0, 1]
};

// Error naming the option (--temperature, --top-k, --top-p) and its value.
void check_sampling_rule(const SamplingRule& r);

// The most probable token (the lowest id among equal logits).
int greedy_token(const float* logits, int V);

// The distribution a rule with temperature > 0 draws from: softmax of
// logits / temperature over the top_k largest logits (ties: lower id first),
// then over the fewest of those, most probable first, whose probabilities sum
// to at least top_p; renormalised; 0 elsewhere.
std::vector<double> sampling_probs(const float* logits, int V, const SamplingRule& r);

// Index drawn from probabilities `p` with a uniform number `coin` in [0, 1).
int sample_index(const std::vector<double>& p, double coin);

// The next token: greedy_token when temperature is 0, else a draw from sampling_probs.
int next_token(const float* logits, int V, const SamplingRule& r, double coin);

// Uniform numbers in [0, 1) from a seed (xorshift64*): a portable stream,
// identical on every rank.
class CoinStream {
 public:
  explicit CoinStream(uint64_t seed);
  double next();

 private:
  uint64_t state_;
};

// Bytes for ids < 256, "<id>" otherwise; control characters but newline and
// tab shown as '?', so a sample never garbles a terminal.
std::string decode_bytes(const std::vector<int32_t>& tokens);

}  // namespace zeropp
