#include "src/config/suggest.hpp"

#include <algorithm>

namespace zeropp {

size_t edit_distance(const std::string& a, const std::string& b) {
  // d[i][j]: edits between a's first i and b's first j characters (optimal
  // string alignment: a swap of neighbours counts as one edit, the commonest typo).
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string closest_key(const std::string& unknown, const std::vector<std::string>& known) {
  const auto name_of = [](const std::string& k) {
    const auto dot = k.find('.');
    return dot == std::string::npos ? k : k.substr(dot + 1);
  };
  const std::string name = name_of(unknown);
  std::string best;
  size_t best_d = std::max<size_t>(1, name.size() / 3) + 1;  // one more than allowed
  for (const auto& k : known) {
    const size_t d = std::min(edit_distance(unknown, k), edit_distance(name, name_of(k)) + 1);
    if (d < best_d) {
      best = k;
      best_d = d;
    }
  }
  return best;
}

}  // namespace zeropp
