// AdamW over the rank's shards, and the learning-rate schedule.
//
// The optimizer sees only flat fp32 shards (master weights, gradients, the
// two moments) and the segments of each shard that get weight decay; it
// knows nothing of units or ranks. Weight decay is decoupled (AdamW) and
// applies to matrices and embeddings, not to biases or LayerNorm parameters.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/runtime/common.hpp"
#include "src/config/config.hpp"
#include "src/models/param_layout.hpp"

namespace zeropp {

// Linear warm-up from lr/warmup to lr over warmup_steps, then cosine decay
// to min_lr at the last step. `step` counts from 0.
double learning_rate(const OptimConfig& o, int64_t step, int64_t total_steps);

// A run [begin, end) of a unit's flat buffer and whether it is decayed.
struct DecaySegment {
  int64_t begin, end;
  bool decay;
};

// The segments of unit `u` that fall into [begin, end), in order; padding
// past the unit's parameters comes out as a non-decayed segment.
std::vector<DecaySegment> decay_segments(const UnitSpec& u, int64_t begin, int64_t end);

// One AdamW step on a shard whose elements [0, n) are the unit elements
// [shard_begin, shard_begin + n). grad_scale multiplies the gradient
// (the clipping factor). step counts from 1.
void adamw_shard(Vec<float> param, Vec<float> m, Vec<float> v, CVec<float> grad,
                 const std::vector<DecaySegment>& segments, int64_t shard_begin, const OptimConfig& o,
                 double lr, int step, float grad_scale);

}  // namespace zeropp
