// One row of a causal attention softmax, shared by attention.cpp and
// attention_decode.cpp: out[t2] = softmax over t2 <= last of in[t2] (max
// subtracted), out[t2] = 0 for last < t2 < n. out may be in.
#pragma once

#include "kernels/common.hpp"

namespace zeropp {

template <class T>
KOKKOS_INLINE_FUNCTION void causal_softmax_row(T* out, const T* in, int last, int n) {
  T maxv = in[0];
  for (int t2 = 1; t2 <= last; ++t2) maxv = in[t2] > maxv ? in[t2] : maxv;
  T sum = 0;
  for (int t2 = 0; t2 <= last; ++t2) {
    out[t2] = Kokkos::Experimental::exp(in[t2] - maxv);
    sum += out[t2];
  }
  const T inv = T(1) / sum;
  for (int t2 = 0; t2 <= last; ++t2) out[t2] *= inv;
  for (int t2 = last + 1; t2 < n; ++t2) out[t2] = T(0);
}

}  // namespace zeropp
