#include "kernels/ops/adamw.hpp"

#include <cmath>

#include "kernels/runtime/device_context.hpp"
#include "kernels/runtime/parallel_chunks.hpp"
#include "kernels/runtime/simd_dispatch.hpp"

#ifdef ZEROPP_HAVE_CUDA
#include "kernels/cuda/ops.hpp"
#endif

namespace zeropp {

namespace {

// One pass over a chunk, in the widest instruction set (kernels/runtime/simd_dispatch.hpp).
template <class T>
struct AdamW {
  static ZEROPP_SIMD_INLINE void run(T* __restrict p, T* __restrict pm, T* __restrict pv,
                                     const T* __restrict g, int64_t n, T lr, T beta1, T beta2, T eps,
                                     T weight_decay, T c1, T c2, T grad_scale) {
    for (int64_t i = 0; i < n; ++i) {
      const T gi = g[i] * grad_scale;
      const T mi = beta1 * pm[i] + (T(1) - beta1) * gi;
      const T vi = beta2 * pv[i] + (T(1) - beta2) * gi * gi;
      pm[i] = mi;
      pv[i] = vi;
      p[i] -= lr * (mi * c1 / (std::sqrt(vi * c2) + eps) + weight_decay * p[i]);
    }
  }
};

}  // namespace

template <class T>
void adamw_update(Vec<T> param, Vec<T> m, Vec<T> v, CVec<T> grad, int64_t n, T lr, T beta1, T beta2, T eps,
                  T weight_decay, int step, T grad_scale) {
  ZEROPP_ON_DEVICE(T, "adamw_update",
                   cuda::adamw_update(param.data(), m.data(), v.data(), grad.data(), n, lr, beta1, beta2, eps,
                                      weight_decay, step, grad_scale, ZD->stream));
  const T c1 = T(1) / (T(1) - std::pow(beta1, T(step)));
  const T c2 = T(1) / (T(1) - std::pow(beta2, T(step)));
  parallel_chunks(n, kChunkElements, [&](int64_t, int64_t b, int64_t e) {
    simd_dispatch<AdamW<T>>(param.data() + b, m.data() + b, v.data() + b, grad.data() + b, e - b, lr, beta1,
                            beta2, eps, weight_decay, c1, c2, grad_scale);
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
