// One softmax row in passes that each vectorise, shared by the LM head's
// cross-entropy and attention's causal softmax:
//   out[i] = exp(scale (in[i] - max)) / sum,  i < n,  scale > 0.
// The max and the sum run in kLanes independent partial results (float
// reductions are not reordered by the compiler on its own; the lane sums are
// also slightly more accurate than one running sum). out may alias in: every
// element is read before it is written. Returns the row's max and the sum of
// the exponentials (cross-entropy's loss is log(sum) - (target - max) at scale 1).
#pragma once

#include "kernels/fast_exp.hpp"

namespace zeropp {

template <class T>
struct SoftmaxRowStats {
  T max, sum;
};

template <class T>
KOKKOS_INLINE_FUNCTION SoftmaxRowStats<T> softmax_row(const T* in, T* out, int n, T scale) {
  constexpr int kLanes = 8;
  const int nl = n - n % kLanes;  // the lanes cover [0, nl), scalar tails the rest
  T lane[kLanes];
  for (int j = 0; j < kLanes; ++j) lane[j] = in[0];
  for (int i = 0; i < nl; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lane[j] = in[i + j] > lane[j] ? in[i + j] : lane[j];
  T maxv = lane[0];
  for (int j = 1; j < kLanes; ++j) maxv = lane[j] > maxv ? lane[j] : maxv;
  for (int i = nl; i < n; ++i) maxv = in[i] > maxv ? in[i] : maxv;
  for (int i = 0; i < n; ++i) out[i] = exp_nonpositive(scale * (in[i] - maxv));
  for (int j = 0; j < kLanes; ++j) lane[j] = T(0);
  for (int i = 0; i < nl; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lane[j] += out[i + j];
  T sum = 0;
  for (int j = 0; j < kLanes; ++j) sum += lane[j];
  for (int i = nl; i < n; ++i) sum += out[i];
  const T inv = T(1) / sum;
  for (int i = 0; i < n; ++i) out[i] *= inv;
  return {maxv, sum};
}

}  // namespace zeropp
