#include "kernels/gelu.hpp"

#include <cmath>

#include "kernels/fast_exp.hpp"

namespace zeropp {

namespace {
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2/pi)
constexpr double kCubic = 0.044715;
}  // namespace

// glibc's tanhf is ~6x slower than its expf, and expf does not vectorise; this
// GELU runs over [B,Tn,4C] every layer, so tanh goes through fast_exp.hpp's
// vectorisable exponential, over chunks whose inner loop vectorises.
template <class T>
void gelu_forward(Vec<T> out, CVec<T> inp, int64_t n) {
  T* o = out.data();
  const T* x = inp.data();
  for_element_chunks(
      "gelu_forward", n, KOKKOS_LAMBDA(const int64_t i0, const int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          const T xi = x[i];
          const T u = T(kSqrt2OverPi) * (xi + T(kCubic) * xi * xi * xi);
          o[i] = T(0.5) * xi * (T(1) + tanh_vectorisable(u));
        }
      });
}

template <class T>
void gelu_backward(Vec<T> dinp, CVec<T> inp, CVec<T> dout, int64_t n) {
  T* dx = dinp.data();
  const T* x = inp.data();
  const T* dy = dout.data();
  for_element_chunks(
      "gelu_backward", n, KOKKOS_LAMBDA(const int64_t i0, const int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          const T xi = x[i];
          const T u = T(kSqrt2OverPi) * (xi + T(kCubic) * xi * xi * xi);
          const T th = tanh_vectorisable(u);
          const T du = T(kSqrt2OverPi) * (T(1) + T(3 * kCubic) * xi * xi);
          dx[i] += dy[i] * (T(0.5) * (T(1) + th) + T(0.5) * xi * (T(1) - th * th) * du);
        }
      });
}

template <class T>
void gelu_forward_reference(Vec<T> out, CVec<T> inp, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T x = inp(i);
    out(i) = T(0.5) * x * (T(1) + std::tanh(T(kSqrt2OverPi) * (x + T(kCubic) * x * x * x)));
  }
}

template <class T>
void gelu_backward_reference(Vec<T> dinp, CVec<T> inp, CVec<T> dout, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T x = inp(i);
    const T th = std::tanh(T(kSqrt2OverPi) * (x + T(kCubic) * x * x * x));
    const T sech2 = T(1) - th * th;
    dinp(i) += dout(i) *
               (T(0.5) * (T(1) + th) + T(0.5) * x * sech2 * T(kSqrt2OverPi) * (T(1) + T(3 * kCubic) * x * x));
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
