#include "src/app/rollout.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/device_memory.hpp"

namespace zeropp {

std::vector<int32_t> sample_completions(Model<float>& model, const PassRunner& run,
                                        const std::vector<int32_t>& prompts, int B, int Tp, int Tc,
                                        double temperature, uint64_t seed) {
  std::vector<std::vector<int32_t>> rows(static_cast<size_t>(B));
  for (int b = 0; b < B; ++b)
    rows[size_t(b)].assign(prompts.begin() + long(b) * Tp, prompts.begin() + long(b + 1) * Tp);
  SamplingRule rule;
  rule.temperature = temperature;
  CoinStream coins(seed);
  const auto added = generate(model, run, rows, Tc, rule, coins, [](int, int32_t) {});
  std::vector<int32_t> seqs;
  seqs.reserve(size_t(B) * (Tp + Tc));
  for (int b = 0; b < B; ++b) {
    seqs.insert(seqs.end(), rows[size_t(b)].begin(), rows[size_t(b)].end());
    seqs.insert(seqs.end(), added[size_t(b)].begin(), added[size_t(b)].end());
  }
  return seqs;
}

std::vector<double> completion_log_probs(CVec<float> p, const std::vector<int32_t>& seqs, int B, int Tp,
                                         int Tc) {
  const int S = Tp + Tc, Tn = S - 1;
  std::vector<float> h(p.size());  // the probabilities are in device memory
  copy_to_host(p, h.data());
  const int64_t V = p.size() / (int64_t(B) * Tn);
  std::vector<double> out(size_t(B) * Tc);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < Tc; ++t) {
      const int pos = Tp + t - 1;  // the input position whose output predicts token Tp + t
      const int32_t tok = seqs[size_t(b) * S + Tp + t];
      // A probability that underflowed to 0 would make the KL infinite: floor it at 1e-30.
      const double pt = double(h[size_t(int64_t(b) * Tn * V + int64_t(pos) * V + tok)]);
      out[size_t(b) * Tc + t] = std::log(std::max(pt, 1e-30));
    }
  return out;
}

}  // namespace zeropp
