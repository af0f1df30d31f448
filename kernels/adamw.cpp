#include "kernels/adamw.hpp"

#include <cmath>

#include "kernels/device_context.hpp"

#ifdef ZEROPP_HAVE_CUDA
#include "kernels/cuda/ops.hpp"
#endif

namespace zeropp {

template <class T>
void adamw_update(Vec<T> param, Vec<T> m, Vec<T> v, CVec<T> grad, int64_t n, T lr, T beta1, T beta2, T eps,
                  T weight_decay, int step, T grad_scale) {
  ZEROPP_ON_DEVICE(T, "adamw_update",
                   cuda::adamw_update(param.data(), m.data(), v.data(), grad.data(), n, lr, beta1, beta2, eps,
                                      weight_decay, step, grad_scale, ZD->stream));
  const T c1 = T(1) / (T(1) - std::pow(beta1, T(step)));
  const T c2 = T(1) / (T(1) - std::pow(beta2, T(step)));
  T* p = param.data();
  T* pm = m.data();
  T* pv = v.data();
  const T* g = grad.data();
  Kokkos::parallel_for(
      "adamw_update", Range(0, n), KOKKOS_LAMBDA(const int64_t i) {
        const T gi = g[i] * grad_scale;
        const T mi = beta1 * pm[i] + (T(1) - beta1) * gi;
        const T vi = beta2 * pv[i] + (T(1) - beta2) * gi * gi;
        pm[i] = mi;
        pv[i] = vi;
        p[i] -= lr * (mi * c1 / (Kokkos::Experimental::sqrt(vi * c2) + eps) + weight_decay * p[i]);
      });
}

template <class T>
void adamw_update_reference(Vec<T> param, Vec<T> m, Vec<T> v, CVec<T> grad, int64_t n, T lr, T beta1, T beta2,
                            T eps, T weight_decay, int step, T grad_scale) {
  for (int64_t i = 0; i < n; ++i) {
    const T g = grad(i) * grad_scale;
    m(i) = beta1 * m(i) + (T(1) - beta1) * g;
    v(i) = beta2 * v(i) + (T(1) - beta2) * g * g;
    const T mhat = m(i) / (T(1) - std::pow(beta1, T(step)));
    const T vhat = v(i) / (T(1) - std::pow(beta2, T(step)));
    param(i) -= lr * (mhat / (std::sqrt(vhat) + eps) + weight_decay * param(i));
  }
}

#define ZEROPP_INSTANTIATE_ADAMW(T)                                                               \
  template void adamw_update<T>(Vec<T>, Vec<T>, Vec<T>, CVec<T>, int64_t, T, T, T, T, T, int, T); \
  template void adamw_update_reference<T>(Vec<T>, Vec<T>, Vec<T>, CVec<T>, int64_t, T, T, T, T, T, int, T);
ZEROPP_INSTANTIATE_ADAMW(float)
ZEROPP_INSTANTIATE_ADAMW(double)

}  // namespace zeropp
