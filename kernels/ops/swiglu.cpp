#include "kernels/ops/swiglu.hpp"

#include <cmath>

#include "kernels/runtime/device_dispatch.hpp"

namespace zeropp {

template <class T>
void swiglu_forward(Vec<T> out, CVec<T> inp, int64_t N, int F) {
  ZEROPP_ON_DEVICE(T, "swiglu_forward", cuda::swiglu_forward(out.data(), inp.data(), N, F, ZD->stream));
  T* o = out.data();
  const T* x = inp.data();
  Kokkos::parallel_for(
      "swiglu_forward", Range(0, N * F), KOKKOS_LAMBDA(const int64_t i) {
        const int64_t n = i / F, f = i % F;
        const T a = x[n * 2 * F + f], b = x[n * 2 * F + F + f];
        o[i] = a / (T(1) + std::exp(-a)) * b;
      });
}

template <class T>
void swiglu_backward(Vec<T> dinp, CVec<T> inp, CVec<T> dout, int64_t N, int F, GradMode dinp_mode) {
  ZEROPP_ON_DEVICE(T, "swiglu_backward",
                   cuda::swiglu_backward(dinp.data(), inp.data(), dout.data(), N, F, dinp_mode, ZD->stream));
  T* dx = dinp.data();
  const T* x = inp.data();
  const T* dy = dout.data();
  const bool acc = dinp_mode == GradMode::Accumulate;
  Kokkos::parallel_for(
      "swiglu_backward", Range(0, N * F), KOKKOS_LAMBDA(const int64_t i) {
        const int64_t n = i / F, f = i % F;
        const T a = x[n * 2 * F + f], b = x[n * 2 * F + F + f];
        const T s = T(1) / (T(1) + std::exp(-a));
        const T da = dy[i] * b * s * (T(1) + a * (T(1) - s)), db = dy[i] * a * s;
        T* d = dx + n * 2 * F;
        d[f] = acc ? d[f] + da : da;
        d[F + f] = acc ? d[F + f] + db : db;
      });
}

template <class T>
void swiglu_forward_reference(Vec<T> out, CVec<T> inp, int64_t N, int F) {
  for (int64_t n = 0; n < N; ++n)
    for (int f = 0; f < F; ++f) {
      const double a = inp(n * 2 * F + f), b = inp(n * 2 * F + F + f);
      out(n * F + f) = T(a / (1 + std::exp(-a)) * b);
    }
}

template <class T>
void swiglu_backward_reference(Vec<T> dinp, CVec<T> inp, CVec<T> dout, int64_t N, int F, GradMode dinp_mode) {
  if (dinp_mode == GradMode::Overwrite) Kokkos::deep_copy(dinp, T(0));
  for (int64_t n = 0; n < N; ++n)
    for (int f = 0; f < F; ++f) {
      const double a = inp(n * 2 * F + f), b = inp(n * 2 * F + F + f), d = dout(n * F + f);
      const double s = 1 / (1 + std::exp(-a));
      dinp(n * 2 * F + f) += T(d * b * (s + a * s * (1 - s)));
      dinp(n * 2 * F + F + f) += T(d * a * s);
    }
}

#define ZEROPP_INSTANTIATE_SWIGLU(T)                                                  \
  template void swiglu_forward<T>(Vec<T>, CVec<T>, int64_t, int);                     \
  template void swiglu_backward<T>(Vec<T>, CVec<T>, CVec<T>, int64_t, int, GradMode); \
  template void swiglu_forward_reference<T>(Vec<T>, CVec<T>, int64_t, int);           \
  template void swiglu_backward_reference<T>(Vec<T>, CVec<T>, CVec<T>, int64_t, int, GradMode);
ZEROPP_INSTANTIATE_SWIGLU(float)
ZEROPP_INSTANTIATE_SWIGLU(double)

}  // namespace zeropp
