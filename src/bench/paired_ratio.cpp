#include "src/bench/paired_ratio.hpp"

#include <algorithm>
#include <string>

#include "src/base/errors.hpp"

namespace zeropp {

PairedRatio paired_ratio(const std::vector<double>& step_seconds, const std::vector<double>& mix_seconds,
                         double step_flops, double mix_flops) {
  if (step_seconds.empty() || step_seconds.size() != mix_seconds.size())
    throw Error("paired ratio: " + std::to_string(step_seconds.size()) + " step times and " +
                std::to_string(mix_seconds.size()) + " GEMM mix times (need as many, at least one)");
  if (!(step_flops > 0) || !(mix_flops > 0))
    throw Error("paired ratio: FLOP counts must be positive, got step " + std::to_string(step_flops) +
                ", mix " + std::to_string(mix_flops));
  std::vector<double> ratio, reference;
  for (size_t i = 0; i < step_seconds.size(); ++i) {
    if (!(step_seconds[i] > 0) || !(mix_seconds[i] > 0))
      throw Error("paired ratio: step " + std::to_string(i) + " has a non-positive time (step " +
                  std::to_string(step_seconds[i]) + " s, mix " + std::to_string(mix_seconds[i]) + " s)");
    const double s = step_flops / step_seconds[i], r = mix_flops / mix_seconds[i];
    ratio.push_back(s / r);
    reference.push_back(r * 1e-9);
  }
  const auto [lo, hi] = std::minmax_element(ratio.begin(), ratio.end());
  return {median(ratio), *lo, *hi, median(reference)};
}

}  // namespace zeropp
