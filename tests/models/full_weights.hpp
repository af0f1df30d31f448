// A UnitSource that owns every unit's full weights and gradient: the model
// on one process with no engine, for tests that exercise the model alone.
#pragma once

#include <random>
#include <vector>

#include "src/models/model.hpp"

namespace zeropp::test {

template <class T>
struct FullWeights final : UnitSource<T> {
  std::vector<Buf<T>> w, g;
  std::vector<int> acquired, done;

  FullWeights(const Model<T>& model, uint64_t seed) {
    const ParamLayout& layout = model.layout();
    for (size_t u = 0; u < layout.units.size(); ++u) {
      const int64_t n = layout.units[u].numel;
      w.emplace_back("w", size_t(n));
      g.emplace_back("g", size_t(n));
      model.init_unit(int(u), seed, 0, n, w.back().data());
    }
  }
  CVec<T> acquire(int u) override {
    acquired.push_back(u);
    return CVec<T>(w[size_t(u)].data(), int64_t(w[size_t(u)].size()));
  }
  void release(int) override {}
  Vec<T> grad(int u) override { return Vec<T>(g[size_t(u)].data(), int64_t(g[size_t(u)].size())); }
  void grad_done(int u) override { done.push_back(u); }
  // Adds N(0, sd) to every weight (biases and gains too, so no product term vanishes).
  template <class Rng>
  void perturb(Rng& rng, T sd) {
    std::normal_distribution<T> n(0, sd);
    for (auto& b : w)
      for (size_t i = 0; i < b.size(); ++i) b(i) += n(rng);
  }
  void zero_grad() {
    for (auto& b : g) Kokkos::deep_copy(b, T(0));
  }
};

}  // namespace zeropp::test
