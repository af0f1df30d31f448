#include "src/app/sampler.hpp"

namespace zeropp {

int sample_index(const std::vector<float>& p, double coin) {
  double cdf = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    cdf += p[i];
    if (coin < cdf) return int(i);
  }
  return int(p.size()) - 1;  // rounding left cdf just below 1
}

std::vector<int32_t> sample_tokens(const NextTokenProbs& next, const std::string& prompt, int n_tokens,
                                   int max_context, uint64_t seed) {
  std::vector<int32_t> toks;
  for (unsigned char c : prompt) toks.push_back(c);
  if (toks.empty()) toks.push_back('\n');
  uint64_t state = seed;
  for (int i = 0; i < n_tokens; ++i) {
    const size_t start = toks.size() > size_t(max_context) ? toks.size() - size_t(max_context) : 0;
    const std::vector<int32_t> ctx(toks.begin() + long(start), toks.end());
    // xorshift64*: a portable stream, identical on every rank.
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    const double coin = double((state * 0x2545F4914F6CDD1Dull) >> 11) / double(1ull << 53);
    toks.push_back(sample_index(next(ctx), coin));
  }
  return toks;
}

std::string decode_bytes(const std::vector<int32_t>& tokens) {
  std::string s;
  for (int32_t t : tokens) {
    if (t >= 256)
      s += "<" + std::to_string(t) + ">";
    else if (t < 32 && t != '\n' && t != '\t')
      s += '?';
    else
      s += char(t);
  }
  return s;
}

}  // namespace zeropp
