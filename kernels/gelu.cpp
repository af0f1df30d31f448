#include "kernels/gelu.hpp"

#include <cmath>

#include "kernels/gelu_math.hpp"

namespace zeropp {

// Over chunks whose inner loop vectorises (gelu_math.hpp's tanh has no call).
template <class T>
void gelu_forward(Vec<T> out, CVec<T> inp, int64_t n) {
  T* o = out.data();
  const T* x = inp.data();
  for_element_chunks(
      "gelu_forward", n, KOKKOS_LAMBDA(const int64_t i0, const int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) o[i] = gelu_value(x[i]);
      });
}

template <class T>
void gelu_backward(Vec<T> dinp, CVec<T> inp, CVec<T> dout, int64_t n) {
  T* dx = dinp.data();
  const T* x = inp.data();
  const T* dy = dout.data();
  for_element_chunks(
      "gelu_backward", n, KOKKOS_LAMBDA(const int64_t i0, const int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) dx[i] += dy[i] * gelu_slope(x[i]);
      });
}

template <class T>
void gelu_forward_reference(Vec<T> out, CVec<T> inp, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T x = inp(i);
    out(i) = T(0.5) * x * (T(1) + std::tanh(T(kGeluSqrt2OverPi) * (x + T(kGeluCubic) * x * x * x)));
  }
}

template <class T>
void gelu_backward_reference(Vec<T> dinp, CVec<T> inp, CVec<T> dout, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T x = inp(i);
    const T th = std::tanh(T(kGeluSqrt2OverPi) * (x + T(kGeluCubic) * x * x * x));
    const T sech2 = T(1) - th * th;
    dinp(i) += dout(i) * (T(0.5) * (T(1) + th) +
                          T(0.5) * x * sech2 * T(kGeluSqrt2OverPi) * (T(1) + T(3 * kGeluCubic) * x * x));
  }
}

#define ZEROPP_INSTANTIATE_GELU(T)                                   \
  template void gelu_forward<T>(Vec<T>, CVec<T>, int64_t);           \
  template void gelu_backward<T>(Vec<T>, CVec<T>, CVec<T>, int64_t); \
  template void gelu_forward_reference<T>(Vec<T>, CVec<T>, int64_t); \
  template void gelu_backward_reference<T>(Vec<T>, CVec<T>, CVec<T>, int64_t);
ZEROPP_INSTANTIATE_GELU(float)
ZEROPP_INSTANTIATE_GELU(double)

}  // namespace zeropp
