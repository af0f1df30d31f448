#include "kernels/layernorm.hpp"

#include <cmath>

#include "kernels/layernorm_row.hpp"
#include "kernels/simd_dispatch.hpp"

namespace zeropp {

namespace {

template <class T>
struct LayerNormForward {
  static ZEROPP_SIMD_INLINE void run(T* out, T* mean, T* rstd, const T* x, const T* w, const T* b, int N,
                                     int C) {
    for (int64_t n = 0; n < N; ++n) {
      const auto [m, s] = layernorm_row(x + n * C, out + n * C, w, b, C);
      mean[n] = m;
      rstd[n] = s;
    }
  }
};

// Row by row: the row's two sums, then dinp, and dweight/dbias accumulated
// in the reference's order (row after row).
template <class T>
struct LayerNormBackward {
  // restrict: the row loop touches six arrays, past GCC's limit of run-time
  // overlap checks it would otherwise need in order to vectorise.
  static ZEROPP_SIMD_INLINE void run(T* __restrict dx, T* __restrict dw, T* __restrict db,
                                     const T* __restrict dy, const T* __restrict x, const T* __restrict w,
                                     const T* mean, const T* rstd, int N, int C) {
    for (int64_t n = 0; n < N; ++n) {
      const T* xr = x + n * C;
      const T* dyr = dy + n * C;
      const T m = mean[n], s = rstd[n];
      const T dnorm_mean =
          lane_sum<T>(C, [w, dyr](int64_t c) ZEROPP_SIMD_INLINE_LAMBDA { return w[c] * dyr[c]; }) / C;
      const T dnorm_norm_mean =
          lane_sum<T>(C, [w, dyr, xr, m, s](int64_t c)
                             ZEROPP_SIMD_INLINE_LAMBDA { return w[c] * dyr[c] * ((xr[c] - m) * s); }) /
          C;
      T* dxr = dx + n * C;
      for (int c = 0; c < C; ++c) {
        const T norm = (xr[c] - m) * s;
        dxr[c] += s * (w[c] * dyr[c] - dnorm_mean - norm * dnorm_norm_mean);
        dw[c] += dyr[c] * norm;
        db[c] += dyr[c];
      }
    }
  }
};

}  // namespace

template <class T>
void layernorm_forward(Vec<T> out, Vec<T> mean, Vec<T> rstd, CVec<T> inp, CVec<T> weight, CVec<T> bias, int N,
                       int C) {
  simd_dispatch<LayerNormForward<T>>(out.data(), mean.data(), rstd.data(), inp.data(), weight.data(),
                                     bias.data(), N, C);
}

template <class T>
void layernorm_backward(Vec<T> dinp, Vec<T> dweight, Vec<T> dbias, CVec<T> dout, CVec<T> inp, CVec<T> weight,
                        CVec<T> mean, CVec<T> rstd, int N, int C) {
  simd_dispatch<LayerNormBackward<T>>(dinp.data(), dweight.data(), dbias.data(), dout.data(), inp.data(),
                                      weight.data(), mean.data(), rstd.data(), N, C);
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
