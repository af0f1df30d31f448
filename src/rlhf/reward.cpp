#include "src/rlhf/reward.hpp"

#include <algorithm>

namespace zeropp {

double word_reward(const std::string& text, const std::string& word, int clip) {
  int n = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + word.size())) ++n;
  return double(std::min(n, clip));
}

}  // namespace zeropp
