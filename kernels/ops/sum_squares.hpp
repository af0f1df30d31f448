// Sum of squares of n values, sum_i x[i]^2, for global gradient-norm clipping
// (the caller sums the partial results over ranks and takes the square root).
// Double accumulators, so float gradients of hundreds of millions of entries
// do not lose precision; 16 of them (kernels/ops/lane_sum.hpp), so that the loop
// vectorises in the widest instructions the CPU has (kernels/runtime/simd_dispatch.hpp).
#pragma once

#include "kernels/runtime/common.hpp"

namespace zeropp {

template <class T>
double sum_squares(CVec<T> x, int64_t n);

template <class T>
double sum_squares_reference(CVec<T> x, int64_t n);

}  // namespace zeropp
