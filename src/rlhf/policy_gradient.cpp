#include "src/rlhf/policy_gradient.hpp"

namespace zeropp {

std::vector<double> token_returns(const std::vector<double>& reward, const std::vector<double>& lp,
                                  const std::vector<double>& lr, double beta, int B, int Tc) {
  std::vector<double> G(size_t(B) * Tc);
  for (int b = 0; b < B; ++b) {
    double g = reward[size_t(b)];
    for (int t = Tc - 1; t >= 0; --t) {
      const size_t i = size_t(b) * Tc + t;
      g -= beta * (lp[i] - lr[i]);
      G[i] = g;
    }
  }
  return G;
}

std::vector<double> column_sums(const std::vector<double>& G, int B, int Tc) {
  std::vector<double> s(size_t(Tc), 0.0);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < Tc; ++t) s[size_t(t)] += G[size_t(b) * Tc + t];
  return s;
}

std::vector<float> advantage_weights(const std::vector<double>& G, const std::vector<double>& baseline, int B,
                                     int Tp, int Tc) {
  const int T = Tp + Tc - 1;
  std::vector<float> w(size_t(B) * T, 0.0f);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < Tc; ++t)
      w[size_t(b) * T + (Tp - 1 + t)] = float(G[size_t(b) * Tc + t] - baseline[size_t(t)]);
  return w;
}

}  // namespace zeropp
