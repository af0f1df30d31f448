// sum_{i<n} term(i) in kLanes independent partial sums, added up at the end:
// float sums are not reordered by the compiler on its own (no -ffast-math),
// so a single running sum would not vectorise. 16 lanes are one AVX-512
// register of floats, two of AVX2, four of SSE2, and the order of the
// additions is the same on every path. Slightly more accurate than one
// running sum, too. term must be cheap and inlinable (a lambda marked
// ZEROPP_SIMD_INLINE_LAMBDA) for the loop to vectorise
// (kernels/runtime/simd_dispatch.hpp), and take its index as int64_t: narrowed to int
// it may wrap, and GCC then loads the lanes one by one.
#pragma once

#include <cstdint>

#include "kernels/runtime/simd_dispatch.hpp"

namespace zeropp {

template <class T, class F>
ZEROPP_SIMD_INLINE T lane_sum(int64_t n, const F& term) {
  constexpr int kLanes = 16;
  const int64_t nl = n - n % kLanes;  // the lanes cover [0, nl), a scalar tail the rest
  T lane[kLanes] = {};
  for (int64_t i = 0; i < nl; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lane[j] += term(i + j);
  T sum = 0;
  for (int j = 0; j < kLanes; ++j) sum += lane[j];
  for (int64_t i = nl; i < n; ++i) sum += term(i);
  return sum;
}

}  // namespace zeropp
