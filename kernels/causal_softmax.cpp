#include "kernels/causal_softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace zeropp {

template <class T>
void causal_softmax_forward(Vec<T> att, CVec<T> pre, int64_t rows, int Tn) {
  const T* p = pre.data();
  T* a = att.data();
  Kokkos::parallel_for(
      "causal_softmax_forward", Range(0, rows),
      KOKKOS_LAMBDA(const int64_t r) { causal_softmax_row(a + r * Tn, p + r * Tn, int(r % Tn), Tn); });
}

template <class T>
void causal_softmax_backward(Vec<T> dpre, CVec<T> att, CVec<T> datt, int64_t rows, int Tn, T scale) {
  const T* a = att.data();
  const T* da = datt.data();
  T* dp = dpre.data();
  Kokkos::parallel_for(
      "causal_softmax_backward", Range(0, rows), KOKKOS_LAMBDA(const int64_t r) {
        const int t = int(r % Tn);
        const T* ar = a + r * Tn;
        const T* dar = da + r * Tn;
        T* dpr = dp + r * Tn;
        // The dot product in lanes, so that it vectorises (see softmax_row.hpp).
        constexpr int kLanes = 8;
        const int n = t + 1, nl = n - n % kLanes;
        T lane[kLanes] = {};
        for (int i = 0; i < nl; i += kLanes)
          for (int j = 0; j < kLanes; ++j) lane[j] += ar[i + j] * dar[i + j];
        T dot = 0;
        for (int j = 0; j < kLanes; ++j) dot += lane[j];
        for (int i = nl; i < n; ++i) dot += ar[i] * dar[i];
        for (int t2 = 0; t2 < n; ++t2) dpr[t2] = scale * ar[t2] * (dar[t2] - dot);
        for (int t2 = n; t2 < Tn; ++t2) dpr[t2] = T(0);
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
