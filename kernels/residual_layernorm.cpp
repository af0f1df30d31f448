#include "kernels/residual_layernorm.hpp"

#include "kernels/device_dispatch.hpp"
#include "kernels/layernorm.hpp"
#include "kernels/layernorm_row.hpp"
#include "kernels/parallel_chunks.hpp"
#include "kernels/residual.hpp"
#include "kernels/residual_row.hpp"
#include "kernels/simd_dispatch.hpp"

namespace zeropp {

namespace {

template <class T>
struct ResidualLayerNormForward {
  static ZEROPP_SIMD_INLINE void run(T* res, T* out, T* mean, T* rstd, const T* a, const T* b,
                                     const T* b_bias, const T* w, const T* bias, int N, int C) {
    for (int64_t n = 0; n < N; ++n) {
      T* rr = res + n * C;
      residual_row(rr, a + n * C, b + n * C, b_bias, C);
      // The row is still in cache for the statistics and the normalisation.
      const auto [m, s] = layernorm_row<T>(rr, out + n * C, w, bias, C);
      mean[n] = m;
      rstd[n] = s;
    }
  }
};

}  // namespace

template <class T>
void residual_layernorm_forward(Vec<T> res, Vec<T> out, Vec<T> mean, Vec<T> rstd, CVec<T> a, CVec<T> b,
                                CVec<T> b_bias, CVec<T> weight, CVec<T> bias, int N, int C) {
  ZEROPP_ON_DEVICE(
      T, "residual_layernorm_forward",
      cuda::residual_layernorm_forward(res.data(), out.data(), mean.data(), rstd.data(), a.data(), b.data(),
                                       data_or_null(b_bias), weight.data(), bias.data(), N, C, ZD->stream));
  parallel_chunks(N, rows_per_chunk(C), [&](int64_t, int64_t r, int64_t e) {
    const int64_t o = r * C;
    simd_dispatch<ResidualLayerNormForward<T>>(
        res.data() + o, out.data() + o, mean.data() + r, rstd.data() + r, a.data() + o, b.data() + o,
        data_or_null(b_bias), weight.data(), bias.data(), int(e - r), C);
  });
}

template <class T>
void residual_layernorm_forward_reference(Vec<T> res, Vec<T> out, Vec<T> mean, Vec<T> rstd, CVec<T> a,
                                          CVec<T> b, CVec<T> b_bias, CVec<T> weight, CVec<T> bias, int N,
                                          int C) {
  if (b_bias.size() > 0)
    bias_residual_forward_reference<T>(res, a, b, b_bias, N, C);
  else
    residual_forward_reference<T>(res, a, b, int64_t(N) * C);
  layernorm_forward_reference<T>(out, mean, rstd, res, weight, bias, N, C);
}

#define ZEROPP_INSTANTIATE_RESIDUAL_LAYERNORM(T)                                                          \
  template void residual_layernorm_forward<T>(Vec<T>, Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>,  \
                                              CVec<T>, CVec<T>, int, int);                                \
  template void residual_layernorm_forward_reference<T>(Vec<T>, Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, \
                                                        CVec<T>, CVec<T>, CVec<T>, int, int);
ZEROPP_INSTANTIATE_RESIDUAL_LAYERNORM(float)
ZEROPP_INSTANTIATE_RESIDUAL_LAYERNORM(double)

}  // namespace zeropp
