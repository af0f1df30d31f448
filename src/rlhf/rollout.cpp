#include "src/rlhf/rollout.hpp"

#include "kernels/runtime/device_memory.hpp"

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

std::vector<double> completion_log_probs(CVec<float> losses, int B, int Tp, int Tc) {
  const int Tn = Tp + Tc - 1;
  std::vector<float> h(static_cast<size_t>(B) * Tn);  // B·Tn values cross to the host, not B·Tn·V
  copy_to_host(losses, h.data());
  std::vector<double> out(size_t(B) * Tc);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < Tc; ++t)  // input position Tp + t - 1 predicts token Tp + t
      out[size_t(b) * Tc + t] = -double(h[size_t(b) * Tn + Tp + t - 1]);
  return out;
}

}  // namespace zeropp
