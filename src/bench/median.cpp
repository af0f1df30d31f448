#include "src/bench/median.hpp"

#include <algorithm>

#include "src/base/errors.hpp"

namespace zeropp {

double median(std::vector<double> v) {
  if (v.empty()) throw Error("median of no values");
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace zeropp
