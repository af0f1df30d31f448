#include "kernels/ops/layernorm.hpp"

#include <cmath>

#include "kernels/ops/layernorm_row.hpp"
#include "kernels/ops/layernorm_seed.hpp"
#include "kernels/runtime/device_dispatch.hpp"
#include "kernels/runtime/parallel_chunks.hpp"
#include "kernels/runtime/simd_dispatch.hpp"

namespace zeropp {

namespace {

// seed null: plain LayerNorm; else also seed = x + seed_bias
// (layernorm_seed.hpp), while the row is in cache.
template <class T>
struct LayerNormForward {
  static ZEROPP_SIMD_INLINE void run(T* out, T* mean, T* rstd, T* seed, const T* x, const T* w, const T* b,
                                     const T* seed_bias, int N, int C) {
    for (int64_t n = 0; n < N; ++n) {
      const T* xr = x + n * C;
      const auto [m, s] = layernorm_row(xr, out + n * C, w, b, C);
      mean[n] = m;
      rstd[n] = s;
      if (seed)
        for (int c = 0; c < C; ++c) seed[n * C + c] = xr[c] + seed_bias[c];
    }
  }
};

template <class T>
void forward_rows(T* out, T* mean, T* rstd, T* seed, const T* x, const T* w, const T* b, const T* seed_bias,
                  int N, int C) {
  parallel_chunks(N, rows_per_chunk(C), [&](int64_t, int64_t r, int64_t e) {
    const int64_t o = r * C;
    simd_dispatch<LayerNormForward<T>>(out + o, mean + r, rstd + r, seed ? seed + o : nullptr, x + o, w, b,
                                       seed_bias, int(e - r), C);
  });
}

// dinp row by row (the row's two sums, then dinp); threads take whole rows.
template <class T>
struct LayerNormBackwardInput {
  // restrict: the row loop touches five arrays, past GCC's limit of run-time
  // overlap checks it would otherwise need in order to vectorise.
  static ZEROPP_SIMD_INLINE void run(T* __restrict dx, const T* __restrict dy, const T* __restrict x,
                                     const T* __restrict w, const T* mean, const T* rstd, int N, int C) {
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
      }
    }
  }
};

// dweight and dbias summed row after row (the reference's order); threads
// take blocks of `width` columns (rows C apart), which keeps that order.
template <class T>
struct LayerNormBackwardParams {
  static ZEROPP_SIMD_INLINE void run(T* __restrict dw, T* __restrict db, const T* __restrict dy,
                                     const T* __restrict x, const T* mean, const T* rstd, int N, int C,
                                     int width) {
    for (int64_t n = 0; n < N; ++n) {
      const T* xr = x + n * C;
      const T* dyr = dy + n * C;
      const T m = mean[n], s = rstd[n];
      for (int c = 0; c < width; ++c) {
        dw[c] += dyr[c] * ((xr[c] - m) * s);
        db[c] += dyr[c];
      }
    }
  }
};

}  // namespace

template <class T>
void layernorm_forward(Vec<T> out, Vec<T> mean, Vec<T> rstd, CVec<T> inp, CVec<T> weight, CVec<T> bias, int N,
                       int C) {
  ZEROPP_ON_DEVICE(T, "layernorm_forward",
                   cuda::layernorm_forward(out.data(), mean.data(), rstd.data(), inp.data(), weight.data(),
                                           bias.data(), N, C, ZD->stream));
  forward_rows<T>(out.data(), mean.data(), rstd.data(), nullptr, inp.data(), weight.data(), bias.data(),
                  nullptr, N, C);
}

template <class T>
void layernorm_seed_forward(Vec<T> out, Vec<T> mean, Vec<T> rstd, Vec<T> seed, CVec<T> x, CVec<T> w,
                            CVec<T> b, CVec<T> seed_bias, int N, int C) {
  ZEROPP_ON_DEVICE(T, "layernorm_seed_forward",
                   cuda::layernorm_seed_forward(out.data(), mean.data(), rstd.data(), seed.data(), x.data(),
                                                w.data(), b.data(), seed_bias.data(), N, C, ZD->stream));
  forward_rows<T>(out.data(), mean.data(), rstd.data(), seed.data(), x.data(), w.data(), b.data(),
                  seed_bias.data(), N, C);
}

template <class T>
void layernorm_backward(Vec<T> dinp, Vec<T> dweight, Vec<T> dbias, CVec<T> dout, CVec<T> inp, CVec<T> weight,
                        CVec<T> mean, CVec<T> rstd, int N, int C) {
  ZEROPP_ON_DEVICE(
      T, "layernorm_backward",
      cuda::layernorm_backward(dinp.data(), dweight.data(), dbias.data(), dout.data(), inp.data(),
                               weight.data(), mean.data(), rstd.data(), N, C, ZD->stream));
  parallel_chunks(N, rows_per_chunk(C), [&](int64_t, int64_t b, int64_t e) {
    simd_dispatch<LayerNormBackwardInput<T>>(dinp.data() + b * C, dout.data() + b * C, inp.data() + b * C,
                                             weight.data(), mean.data() + b, rstd.data() + b, int(e - b), C);
  });
  parallel_chunks(C, column_chunk(C), [&](int64_t, int64_t b, int64_t e) {
    simd_dispatch<LayerNormBackwardParams<T>>(dweight.data() + b, dbias.data() + b, dout.data() + b,
                                              inp.data() + b, mean.data(), rstd.data(), N, C, int(e - b));
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

template <class T>
void layernorm_seed_forward_reference(Vec<T> out, Vec<T> mean, Vec<T> rstd, Vec<T> seed, CVec<T> inp,
                                      CVec<T> weight, CVec<T> bias, CVec<T> seed_bias, int N, int C) {
  layernorm_forward_reference<T>(out, mean, rstd, inp, weight, bias, N, C);
  for (int64_t n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c) seed(n * C + c) = inp(n * C + c) + seed_bias(c);
}

#define ZEROPP_INSTANTIATE_LAYERNORM(T)                                                                      \
  template void layernorm_forward<T>(Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>, int, int);           \
  template void layernorm_backward<T>(Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>, CVec<T>, CVec<T>,   \
                                      int, int);                                                             \
  template void layernorm_forward_reference<T>(Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>, int, int); \
  template void layernorm_seed_forward<T>(Vec<T>, Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>,         \
                                          CVec<T>, int, int);                                                \
  template void layernorm_seed_forward_reference<T>(Vec<T>, Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>,        \
                                                    CVec<T>, CVec<T>, int, int);                             \
  template void layernorm_backward_reference<T>(Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>, CVec<T>,  \
                                                CVec<T>, int, int);
ZEROPP_INSTANTIATE_LAYERNORM(float)
ZEROPP_INSTANTIATE_LAYERNORM(double)

}  // namespace zeropp
