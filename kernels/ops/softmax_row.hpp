// One softmax row in passes that each vectorise, shared by the LM head's
// cross-entropy and attention's causal softmax:
//   out[i] = exp(scale (in[i] - max)) / sum,  i < n,  scale > 0.
// The max and the sum run in lanes (kernels/ops/lane_sum.hpp). out may alias in:
// every element is read before it is written. Returns the row's max and the
// sum of the exponentials (cross-entropy's loss is log(sum) - (target - max)
// at scale 1). Always inlined, so that it takes the instruction set of the
// kernel that calls it (kernels/runtime/simd_dispatch.hpp).
#pragma once

#include "kernels/ops/fast_exp.hpp"
#include "kernels/ops/lane_sum.hpp"

namespace zeropp {

template <class T>
struct SoftmaxRowStats {
  T max, sum;
};

template <class T>
KOKKOS_FORCEINLINE_FUNCTION SoftmaxRowStats<T> softmax_row(const T* in, T* out, int n, T scale) {
  constexpr int kLanes = 16;
  const int nl = n - n % kLanes;
  T lane[kLanes];
  for (int j = 0; j < kLanes; ++j) lane[j] = in[0];
  for (int i = 0; i < nl; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lane[j] = in[i + j] > lane[j] ? in[i + j] : lane[j];
  T maxv = lane[0];
  for (int j = 1; j < kLanes; ++j) maxv = lane[j] > maxv ? lane[j] : maxv;
  for (int i = nl; i < n; ++i) maxv = in[i] > maxv ? in[i] : maxv;
  for (int i = 0; i < n; ++i) out[i] = exp_nonpositive(scale * (in[i] - maxv));
  const T sum = lane_sum<T>(n, [out](int64_t i) ZEROPP_SIMD_INLINE_LAMBDA { return out[i]; });
  const T inv = T(1) / sum;
  for (int i = 0; i < n; ++i) out[i] *= inv;
  return {maxv, sum};
}

}  // namespace zeropp
