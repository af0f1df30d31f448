#include "kernels/layernorm.hpp"

#include <cmath>

#include "kernels/layernorm_row.hpp"

namespace zeropp {

template <class T>
void layernorm_forward(Vec<T> out, Vec<T> mean, Vec<T> rstd, CVec<T> inp, CVec<T> weight, CVec<T> bias, int N,
                       int C) {
  T* o = out.data();
  T* mu = mean.data();
  T* rs = rstd.data();
  const T* x = inp.data();
  const T* w = weight.data();
  const T* bb = bias.data();
  Kokkos::parallel_for(
      "layernorm_forward", Range(0, N), KOKKOS_LAMBDA(const int64_t n) {
        const auto [m, s] = layernorm_row(x + n * C, o + n * C, w, bb, C);
        mu[n] = m;
        rs[n] = s;
      });
}

template <class T>
void layernorm_backward(Vec<T> dinp, Vec<T> dweight, Vec<T> dbias, CVec<T> dout, CVec<T> inp, CVec<T> weight,
                        CVec<T> mean, CVec<T> rstd, int N, int C) {
  T* dx = dinp.data();
  T* dw = dweight.data();
  T* db = dbias.data();
  const T* dy = dout.data();
  const T* x = inp.data();
  const T* w = weight.data();
  const T* mu = mean.data();
  const T* rs = rstd.data();
  Kokkos::parallel_for(
      "layernorm_backward_dinp", Range(0, N), KOKKOS_LAMBDA(const int64_t n) {
        const T* xr = x + n * C;
        const T* dyr = dy + n * C;
        const T m = mu[n], s = rs[n];
        T dnorm_mean = 0, dnorm_norm_mean = 0;
        for (int c = 0; c < C; ++c) {
          const T dnorm = w[c] * dyr[c];
          dnorm_mean += dnorm;
          dnorm_norm_mean += dnorm * (xr[c] - m) * s;
        }
        dnorm_mean /= C;
        dnorm_norm_mean /= C;
        T* dxr = dx + n * C;
        for (int c = 0; c < C; ++c)
          dxr[c] += s * (w[c] * dyr[c] - dnorm_mean - (xr[c] - m) * s * dnorm_norm_mean);
      });
  for_column_chunks(
      "layernorm_backward_dparams", C, KOKKOS_LAMBDA(const int c0, const int c1) {
        for (int64_t n = 0; n < N; ++n) {
          const T* xr = x + n * C;
          const T* dyr = dy + n * C;
          const T m = mu[n], s = rs[n];
          for (int c = c0; c < c1; ++c) {
            dw[c] += dyr[c] * (xr[c] - m) * s;
            db[c] += dyr[c];
          }
        }
      });
}

template <class T>
void layernorm_forward_reference(Vec<T> out, Vec<T> mean, Vec<T> rstd, CVec<T> inp, CVec<T> weight,
                                 CVec<T> bias, int N, int C) {
  for (int64_t n = 0; n < N; ++n) {
    T m = 0;
    for (int c = 0; c < C; ++c) m += inp(n * C + c);
    m /= C;
    T var = 0;
    for (int c = 0; c < C; ++c) var += (inp(n * C + c) - m) * (inp(n * C + c) - m);
    var /= C;
    const T s = T(1) / std::sqrt(var + T(kLayerNormEps));
    for (int c = 0; c < C; ++c) out(n * C + c) = (inp(n * C + c) - m) * s * weight(c) + bias(c);
    mean(n) = m;
    rstd(n) = s;
  }
}

template <class T>
void layernorm_backward_reference(Vec<T> dinp, Vec<T> dweight, Vec<T> dbias, CVec<T> dout, CVec<T> inp,
                                  CVec<T> weight, CVec<T> mean, CVec<T> rstd, int N, int C) {
  for (int64_t n = 0; n < N; ++n) {
    T dnorm_mean = 0, dnorm_norm_mean = 0;
    for (int c = 0; c < C; ++c) {
      const T norm = (inp(n * C + c) - mean(n)) * rstd(n);
      const T dnorm = weight(c) * dout(n * C + c);
      dnorm_mean += dnorm;
      dnorm_norm_mean += dnorm * norm;
      dweight(c) += dout(n * C + c) * norm;
      dbias(c) += dout(n * C + c);
    }
    dnorm_mean /= C;
    dnorm_norm_mean /= C;
    for (int c = 0; c < C; ++c) {
      const T norm = (inp(n * C + c) - mean(n)) * rstd(n);
      dinp(n * C + c) += rstd(n) * (weight(c) * dout(n * C + c) - dnorm_mean - norm * dnorm_norm_mean);
    }
  }
}

#define ZEROPP_INSTANTIATE_LAYERNORM(T)                                                                      \
  template void layernorm_forward<T>(Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>, int, int);           \
  template void layernorm_backward<T>(Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>, CVec<T>, CVec<T>,   \
                                      int, int);                                                             \
  template void layernorm_forward_reference<T>(Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>, int, int); \
  template void layernorm_backward_reference<T>(Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>, CVec<T>,  \
                                                CVec<T>, int, int);
ZEROPP_INSTANTIATE_LAYERNORM(float)
ZEROPP_INSTANTIATE_LAYERNORM(double)

}  // namespace zeropp
