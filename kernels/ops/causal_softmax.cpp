#include "kernels/ops/causal_softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/ops/lane_sum.hpp"
#include "kernels/runtime/device_dispatch.hpp"
#include "kernels/runtime/parallel_chunks.hpp"

namespace zeropp {

namespace {

template <class T>
struct CausalSoftmaxForward {
  static ZEROPP_SIMD_INLINE void run(T* att, const T* pre, int64_t r0, int64_t r1, int Tn) {
    for (int64_t r = r0; r < r1; ++r) {
      const int t = int(r % Tn);
      causal_softmax_row(att + r * Tn, pre + r * Tn, t, causal_row_end(t, Tn));
    }
  }
};

template <class T>
struct CausalSoftmaxBackward {
  static ZEROPP_SIMD_INLINE void run(T* dpre, const T* att, const T* datt, int64_t r0, int64_t r1, int Tn,
                                     T scale) {
    for (int64_t r = r0; r < r1; ++r) {
      const int t = int(r % Tn), n = t + 1;  // visible keys
      const T* ar = att + r * Tn;
      const T* dar = datt + r * Tn;
      T* dpr = dpre + r * Tn;
      const T dot = lane_sum<T>(n, [ar, dar](int64_t i) ZEROPP_SIMD_INLINE_LAMBDA { return ar[i] * dar[i]; });
      for (int t2 = 0; t2 < n; ++t2) dpr[t2] = scale * ar[t2] * (dar[t2] - dot);
      for (int t2 = n; t2 < causal_row_end(t, Tn); ++t2) dpr[t2] = T(0);
    }
  }
};

}  // namespace

template <class T>
void causal_softmax_forward(Vec<T> att, CVec<T> pre, int64_t rows, int Tn) {
  ZEROPP_ON_DEVICE(T, "causal_softmax_forward",
                   cuda::causal_softmax_forward(att.data(), pre.data(), rows, Tn, ZD->stream));
  parallel_chunks(rows, rows_per_chunk(Tn), [&](int64_t, int64_t b, int64_t e) {
    simd_dispatch<CausalSoftmaxForward<T>>(att.data(), pre.data(), b, e, Tn);
  });
}

template <class T>
void causal_softmax_backward(Vec<T> dpre, CVec<T> att, CVec<T> datt, int64_t rows, int Tn, T scale) {
  ZEROPP_ON_DEVICE(
      T, "causal_softmax_backward",
      cuda::causal_softmax_backward(dpre.data(), att.data(), datt.data(), rows, Tn, scale, ZD->stream));
  parallel_chunks(rows, rows_per_chunk(Tn), [&](int64_t, int64_t b, int64_t e) {
    simd_dispatch<CausalSoftmaxBackward<T>>(dpre.data(), att.data(), datt.data(), b, e, Tn, scale);
  });
}

template <class T>
void causal_softmax_forward_reference(Vec<T> att, CVec<T> pre, int64_t rows, int Tn) {
  std::vector<T> masked(static_cast<size_t>(Tn));
  for (int64_t r = 0; r < rows; ++r) {
    const int t = int(r % Tn);
    for (int t2 = 0; t2 < Tn; ++t2)
      masked[size_t(t2)] = t2 <= t ? pre(r * Tn + t2) : -std::numeric_limits<T>::infinity();
    T maxv = masked[0];
    for (int t2 = 1; t2 < Tn; ++t2) maxv = std::max(maxv, masked[size_t(t2)]);
    T sum = 0;
    for (int t2 = 0; t2 < Tn; ++t2) sum += std::exp(masked[size_t(t2)] - maxv);
    for (int t2 = 0; t2 < Tn; ++t2) att(r * Tn + t2) = std::exp(masked[size_t(t2)] - maxv) / sum;
  }
}

template <class T>
void causal_softmax_backward_reference(Vec<T> dpre, CVec<T> att, CVec<T> datt, int64_t rows, int Tn,
                                       T scale) {
  for (int64_t r = 0; r < rows; ++r) {
    const int t = int(r % Tn);
    T dot = 0;
    for (int t2 = 0; t2 < Tn; ++t2) dot += att(r * Tn + t2) * datt(r * Tn + t2);
    for (int t2 = 0; t2 < Tn; ++t2) {
      const T g = scale * att(r * Tn + t2) * (datt(r * Tn + t2) - dot);
      dpre(r * Tn + t2) = t2 <= t ? g : T(0);
    }
  }
}

#define ZEROPP_INSTANTIATE_CAUSAL_SOFTMAX(T)                                           \
  template void causal_softmax_forward<T>(Vec<T>, CVec<T>, int64_t, int);              \
  template void causal_softmax_backward<T>(Vec<T>, CVec<T>, CVec<T>, int64_t, int, T); \
  template void causal_softmax_forward_reference<T>(Vec<T>, CVec<T>, int64_t, int);    \
  template void causal_softmax_backward_reference<T>(Vec<T>, CVec<T>, CVec<T>, int64_t, int, T);
ZEROPP_INSTANTIATE_CAUSAL_SOFTMAX(float)
ZEROPP_INSTANTIATE_CAUSAL_SOFTMAX(double)

}  // namespace zeropp
