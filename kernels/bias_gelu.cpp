#include "kernels/bias_gelu.hpp"

#include "kernels/gelu.hpp"
#include "kernels/gelu_math.hpp"

namespace zeropp {

template <class T>
void bias_gelu_forward(Vec<T> pre, Vec<T> out, CVec<T> bias, int N, int OC) {
  Kokkos::parallel_for(
      "bias_gelu_forward", Range(0, N), KOKKOS_LAMBDA(const int64_t n) {
        T* pr = pre.data() + n * OC;
        T* orow = out.data() + n * OC;
        for (int c = 0; c < OC; ++c) {
          pr[c] += bias(c);
          orow[c] = gelu_value(pr[c]);
        }
      });
}

template <class T>
void bias_gelu_backward(Vec<T> dpre, Vec<T> dbias, CVec<T> pre, CVec<T> dout, int N, int OC) {
  // Column chunks (no two work items write one dbias entry); within a row a
  // chunk's columns are contiguous.
  for_column_chunks(
      "bias_gelu_backward", OC, KOKKOS_LAMBDA(const int c0, const int c1) {
        T acc[kColumnChunk] = {};
        for (int64_t n = 0; n < N; ++n) {
          const T* pr = pre.data() + n * OC;
          const T* dy = dout.data() + n * OC;
          T* dp = dpre.data() + n * OC;
          for (int c = c0; c < c1; ++c) {
            const T g = dy[c] * gelu_slope(pr[c]);
            dp[c] += g;
            acc[c - c0] += g;
          }
        }
        for (int c = c0; c < c1; ++c) dbias(c) += acc[c - c0];
      });
}

template <class T>
void bias_gelu_forward_reference(Vec<T> pre, Vec<T> out, CVec<T> bias, int N, int OC) {
  for (int64_t n = 0; n < N; ++n)
    for (int c = 0; c < OC; ++c) pre(n * OC + c) += bias(c);
  gelu_forward_reference<T>(out, pre, int64_t(N) * OC);
}

template <class T>
void bias_gelu_backward_reference(Vec<T> dpre, Vec<T> dbias, CVec<T> pre, CVec<T> dout, int N, int OC) {
  Buf<T> g("g", size_t(N) * OC);  // zero-initialised
  gelu_backward_reference<T>(g, pre, dout, int64_t(N) * OC);
  for (int64_t n = 0; n < N; ++n)
    for (int c = 0; c < OC; ++c) {
      dpre(n * OC + c) += g(n * OC + c);
      dbias(c) += g(n * OC + c);
    }
}

#define ZEROPP_INSTANTIATE_BIAS_GELU(T)                                            \
  template void bias_gelu_forward<T>(Vec<T>, Vec<T>, CVec<T>, int, int);           \
  template void bias_gelu_backward<T>(Vec<T>, Vec<T>, CVec<T>, CVec<T>, int, int); \
  template void bias_gelu_forward_reference<T>(Vec<T>, Vec<T>, CVec<T>, int, int); \
  template void bias_gelu_backward_reference<T>(Vec<T>, Vec<T>, CVec<T>, CVec<T>, int, int);
ZEROPP_INSTANTIATE_BIAS_GELU(float)
ZEROPP_INSTANTIATE_BIAS_GELU(double)

}  // namespace zeropp
