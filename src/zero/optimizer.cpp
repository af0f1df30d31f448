#include "src/zero/optimizer.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/ops/adamw.hpp"

namespace zeropp {

double learning_rate(const OptimConfig& o, int64_t step, int64_t total_steps) {
  if (step < o.warmup_steps) return o.lr * double(step + 1) / double(o.warmup_steps);
  const int64_t decay_steps = total_steps - o.warmup_steps;
  if (decay_steps <= 1) return o.lr;
  const double progress = std::min(1.0, double(step - o.warmup_steps) / double(decay_steps - 1));
  return o.min_lr + 0.5 * (o.lr - o.min_lr) * (1.0 + std::cos(M_PI * progress));
}

std::vector<DecaySegment> decay_segments(const UnitSpec& u, int64_t begin, int64_t end) {
  std::vector<DecaySegment> out;
  for (const ParamPiece& p : params_in(u, begin, end)) {
    if (!out.empty() && out.back().decay == p.param->decay && out.back().end == p.unit_begin)
      out.back().end = p.unit_end;
    else
      out.push_back({p.unit_begin, p.unit_end, p.param->decay});
  }
  const int64_t pad_begin = std::max(begin, u.numel);
  if (pad_begin < end) out.push_back({pad_begin, end, false});
  return out;
}

void adamw_shard(Vec<float> param, Vec<float> m, Vec<float> v, CVec<float> grad,
                 const std::vector<DecaySegment>& segments, int64_t shard_begin, const OptimConfig& o,
                 double lr, int step, float grad_scale) {
  for (const auto& s : segments) {
    const int64_t off = s.begin - shard_begin, n = s.end - s.begin;
    adamw_update<float>(Vec<float>(param.data() + off, n), Vec<float>(m.data() + off, n),
                        Vec<float>(v.data() + off, n), CVec<float>(grad.data() + off, n), n, float(lr),
                        float(o.beta1), float(o.beta2), float(o.eps), s.decay ? float(o.weight_decay) : 0.0f,
                        step, grad_scale);
  }
}

}  // namespace zeropp
