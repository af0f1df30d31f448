// y[i] += x[i] * a over n elements (the engine adds each reduced gradient,
// times 1/P, into the rank's gradient shard).
#pragma once

#include "kernels/runtime/common.hpp"

namespace zeropp {

void accumulate_scaled(Vec<float> y, CVec<float> x, float a, int64_t n);

}  // namespace zeropp
