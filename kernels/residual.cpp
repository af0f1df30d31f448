#include "kernels/residual.hpp"

namespace zeropp {

template <class T>
void residual_forward(Vec<T> out, CVec<T> a, CVec<T> b, int64_t n) {
  T* o = out.data();
  const T* pa = a.data();
  const T* pb = b.data();
  Kokkos::parallel_for(
      "residual_forward", Range(0, n), KOKKOS_LAMBDA(const int64_t i) { o[i] = pa[i] + pb[i]; });
}

template <class T>
void residual_backward(Vec<T> da, Vec<T> db, CVec<T> dout, int64_t n) {
  T* pa = da.data();
  T* pb = db.data();
  const T* dy = dout.data();
  Kokkos::parallel_for(
      "residual_backward", Range(0, n), KOKKOS_LAMBDA(const int64_t i) {
        pa[i] += dy[i];
        pb[i] += dy[i];
      });
}

template <class T>
void residual_forward_reference(Vec<T> out, CVec<T> a, CVec<T> b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out(i) = a(i) + b(i);
}

template <class T>
void residual_backward_reference(Vec<T> da, Vec<T> db, CVec<T> dout, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    da(i) += dout(i);
    db(i) += dout(i);
  }
}

#define ZEROPP_INSTANTIATE_RESIDUAL(T)                                            \
  template void residual_forward<T>(Vec<T>, CVec<T>, CVec<T>, int64_t);           \
  template void residual_backward<T>(Vec<T>, Vec<T>, CVec<T>, int64_t);           \
  template void residual_forward_reference<T>(Vec<T>, CVec<T>, CVec<T>, int64_t); \
  template void residual_backward_reference<T>(Vec<T>, Vec<T>, CVec<T>, int64_t);
ZEROPP_INSTANTIATE_RESIDUAL(float)
ZEROPP_INSTANTIATE_RESIDUAL(double)

}  // namespace zeropp
