#include "src/generate/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "src/base/errors.hpp"

namespace zeropp {

namespace {
std::string num(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", x);
  return b;
}
}  // namespace

void check_sampling_rule(const SamplingRule& r) {
  if (!(r.temperature >= 0) || !std::isfinite(r.temperature))
    throw Error("--temperature " + num(r.temperature) + ": must be >= 0 (0: greedy)");
  if (r.top_k < 0) throw Error("--top-k " + std::to_string(r.top_k) + ": must be >= 0 (0: all tokens)");
  if (!(r.top_p > 0 && r.top_p <= 1)) throw Error("--top-p " + num(r.top_p) + ": must be in (0, 1]");
}

int greedy_token(const float* logits, int V) { return int(std::max_element(logits, logits + V) - logits); }

std::vector<double> sampling_probs(const float* logits, int V, const SamplingRule& r) {
  std::vector<int> order(static_cast<size_t>(V));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
  const size_t k = r.top_k > 0 ? std::min(size_t(r.top_k), size_t(V)) : size_t(V);
  // Softmax over the k kept, largest first: exp(0) for the first, so no overflow.
  std::vector<double> p(k);
  double sum = 0;
  for (size_t i = 0; i < k; ++i)
    sum += p[i] = std::exp((double(logits[order[i]]) - double(logits[order[0]])) / r.temperature);
  size_t keep = 0;
  for (double mass = 0; keep < k && (keep == 0 || mass < r.top_p * sum);) mass += p[keep++];
  double kept = 0;
  for (size_t i = 0; i < keep; ++i) kept += p[i];
  std::vector<double> out(size_t(V), 0.0);
  for (size_t i = 0; i < keep; ++i) out[size_t(order[i])] = p[i] / kept;
  return out;
}

int sample_index(const std::vector<double>& p, double coin) {
  double cdf = 0;
  int last = 0;  // the last token with mass: where rounding that left the cdf just below 1 lands
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0) continue;
    last = int(i);
    cdf += p[i];
    if (coin < cdf) return int(i);
  }
  return last;
}

int next_token(const float* logits, int V, const SamplingRule& r, double coin) {
  return r.temperature == 0 ? greedy_token(logits, V) : sample_index(sampling_probs(logits, V, r), coin);
}

// A zero state would stay zero: the seed is mapped one to one (odd multiplier,
// then an offset) away from it, and the one seed that lands on 0 moved to 1.
CoinStream::CoinStream(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull) {
  if (state_ == 0) state_ = 1;
}

double CoinStream::next() {
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  return double((state_ * 0x2545F4914F6CDD1Dull) >> 11) / double(1ull << 53);
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
