// qgZ's error feedback (LoCo) over n elements: each hop sends Q(g + e) and
// keeps e <- b·e + (1-b)·(g + e - deq(Q(g + e))).
#pragma once

#include "kernels/runtime/common.hpp"

namespace zeropp {

// x[i] += e[i]: forms g + e in place.
void add_error(Vec<float> x, CVec<float> e, int64_t n);
// e[i] <- beta·e[i] + (1 - beta)·(x[i] - deq[i]), x = g + e as add_error left it.
void update_error(Vec<float> e, CVec<float> x, CVec<float> deq, float beta, int64_t n);

}  // namespace zeropp
