#include "src/models/param_layout.hpp"

#include <algorithm>
#include <cmath>

namespace zeropp {

namespace {
uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
}  // namespace

void ParamLayout::add(UnitSpec& u, std::string name, std::vector<int64_t> shape, bool decay,
                      ParamSpec::Init init) {
  ParamSpec p;
  p.name = std::move(name);
  p.shape = std::move(shape);
  p.numel = 1;
  for (auto d : p.shape) p.numel *= d;
  p.offset = u.numel;
  p.decay = decay;
  p.init = init;
  u.numel += p.numel;
  u.params.push_back(std::move(p));
}

void ParamLayout::finish() {
  numel = 0;
  for (const auto& u : units) numel += u.numel;
}

const ParamSpec* ParamLayout::find(const std::string& name, int* unit) const {
  for (size_t u = 0; u < units.size(); ++u)
    for (const auto& p : units[u].params)
      if (p.name == name) {
        if (unit) *unit = int(u);
        return &p;
      }
  return nullptr;
}

std::vector<ParamPiece> params_in(const UnitSpec& u, int64_t begin, int64_t end) {
  std::vector<ParamPiece> out;
  for (const auto& p : u.params) {
    const int64_t b = std::max(begin, p.offset), e = std::min(end, p.offset + p.numel);
    if (b < e) out.push_back({&p, b, e});
  }
  return out;
}

template <class T>
void init_elements(const UnitSpec& u, int unit, uint64_t seed, double std, double std_resid, int64_t begin,
                   int64_t end, T* out) {
  size_t p = 0;
  for (int64_t i = begin; i < end; ++i) {
    while (p < u.params.size() && i >= u.params[p].offset + u.params[p].numel) ++p;
    if (p == u.params.size()) {  // padding beyond the unit's parameters
      out[i - begin] = T(0);
      continue;
    }
    const ParamSpec& ps = u.params[p];
    double v = 0;
    switch (ps.init) {
      case ParamSpec::Init::Zeros:
        v = 0;
        break;
      case ParamSpec::Init::Ones:
        v = 1;
        break;
      case ParamSpec::Init::Normal:
      case ParamSpec::Init::ResidualNormal: {
        // Counter-based: element i of the unit depends on (seed, unit, i) only.
        const uint64_t h =
            splitmix64(seed ^ splitmix64(uint64_t(unit) * 0x100000001B3ull ^ splitmix64(uint64_t(i))));
        const double u1 = (double((h >> 11) & ((1ull << 26) - 1)) + 1.0) / double(1ull << 26);
        const double u2 = double(h >> 38) / double(1ull << 26);
        const double n = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
        v = n * (ps.init == ParamSpec::Init::Normal ? std : std_resid);
        break;
      }
    }
    out[i - begin] = T(v);
  }
}

template void init_elements<float>(const UnitSpec&, int, uint64_t, double, double, int64_t, int64_t, float*);
template void init_elements<double>(const UnitSpec&, int, uint64_t, double, double, int64_t, int64_t,
                                    double*);

}  // namespace zeropp
