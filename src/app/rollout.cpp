#include "src/app/rollout.hpp"

#include <algorithm>
#include <cmath>

#include "src/app/sampler.hpp"

namespace zeropp {

double uniform_from(uint64_t key) {
  uint64_t z = key + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) / double(1ull << 53);
}

std::vector<int32_t> sample_completions(const PrefixProbs& probs, const std::vector<int32_t>& prompts, int B,
                                        int Tp, int Tc, double temperature, uint64_t seed) {
  const int S = Tp + Tc;
  std::vector<int32_t> seqs(size_t(B) * S);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < Tp; ++t) seqs[size_t(b) * S + t] = prompts[size_t(b) * Tp + t];
  std::vector<int32_t> prefix;
  for (int t = 0; t < Tc; ++t) {
    const int Tn = Tp + t;
    prefix.resize(size_t(B) * Tn);
    for (int b = 0; b < B; ++b)
      for (int i = 0; i < Tn; ++i) prefix[size_t(b) * Tn + i] = seqs[size_t(b) * S + i];
    const CVec<float> p = probs(prefix, B, Tn);
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p);
    const int64_t V = p.size() / (int64_t(B) * Tn);
    std::vector<double> q(static_cast<size_t>(V));
    for (int b = 0; b < B; ++b) {
      const float* row = h.data() + (int64_t(b) * Tn + Tn - 1) * V;
      double sum = 0;
      for (int64_t v = 0; v < V; ++v) {
        q[size_t(v)] = temperature == 1.0 ? double(row[v]) : std::pow(double(row[v]), 1.0 / temperature);
        sum += q[size_t(v)];
      }
      for (double& x : q) x /= sum;
      // Each (row, position) its own stream: the draws do not depend on B's split.
      const uint64_t key = seed ^ (uint64_t(b) << 40) ^ (uint64_t(t) << 20);
      seqs[size_t(b) * S + Tn] = sample_index(q, uniform_from(key));
    }
  }
  return seqs;
}

std::vector<double> completion_log_probs(CVec<float> p, const std::vector<int32_t>& seqs, int B, int Tp,
                                         int Tc) {
  const int S = Tp + Tc, Tn = S - 1;
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p);
  const int64_t V = p.size() / (int64_t(B) * Tn);
  std::vector<double> out(size_t(B) * Tc);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < Tc; ++t) {
      const int pos = Tp + t - 1;  // the input position whose output predicts token Tp + t
      const int32_t tok = seqs[size_t(b) * S + Tp + t];
      // A probability that underflowed to 0 would make the KL infinite: floor it at 1e-30.
      const double pt = double(h(int64_t(b) * Tn * V + int64_t(pos) * V + tok));
      out[size_t(b) * Tc + t] = std::log(std::max(pt, 1e-30));
    }
  return out;
}

}  // namespace zeropp
