// Sum of squares of n values, sum_i x[i]^2, for global gradient-norm clipping
// (the caller sums the partial results over ranks and takes the square root).
// A parallel reduction with a double accumulator, so float gradients of
// hundreds of millions of entries do not lose precision.
#pragma once

#include "kernels/common.hpp"

namespace zeropp {

template <class T>
double sum_squares(CVec<T> x, int64_t n);

template <class T>
double sum_squares_reference(CVec<T> x, int64_t n);

}  // namespace zeropp
