// The rule-based reward of `zeropp rlhf`: it needs no second model. On the
// byte-level KJV corpus a completion earns 1 per occurrence of a target
// word (rlhf.reward_word, "LORD" by default: frequent enough in the corpus
// that a pretrained actor sometimes writes it, rare enough to be learned),
// counted without overlaps and clipped at rlhf.reward_clip, so that a
// completion cannot win by repeating the word without bound.
#pragma once

#include <string>

namespace zeropp {

// Non-overlapping occurrences of `word` (not empty) in `text`, at most `clip`.
double word_reward(const std::string& text, const std::string& word, int clip);

}  // namespace zeropp
