#include "kernels/ops/bias_gelu.hpp"

#include "kernels/ops/gelu.hpp"
#include "kernels/ops/gelu_math.hpp"
#include "kernels/runtime/device_dispatch.hpp"
#include "kernels/runtime/parallel_chunks.hpp"
#include "kernels/runtime/simd_dispatch.hpp"

namespace zeropp {

namespace {

// Row after row, dbias summed in place (the reference's order); its OC
// entries stay in cache. Threads take blocks of `width` columns (rows `ld`
// apart), which keeps each dbias entry's order. Overwrite adds g to 0 instead
// of to dpre (not read): the same expression, so the compiler contracts it and
// dbias's sum into FMAs as in Accumulate, and dbias and dpre keep
// Accumulate-into-zeros' bits (storing g itself changed dbias's bits on the
// AVX-512 path). The mode is a template parameter: one loop each.
template <class T, GradMode M>
struct BiasGeluBackward {
  static ZEROPP_SIMD_INLINE void run(T* dpre, T* dbias, const T* pre, const T* dout, int N, int width,
                                     int64_t ld) {
    for (int64_t n = 0; n < N; ++n) {
      const T* pr = pre + n * ld;
      const T* dy = dout + n * ld;
      T* dp = dpre + n * ld;
      for (int c = 0; c < width; ++c) {
        const T g = dy[c] * gelu_slope(pr[c]);
        dp[c] = (M == GradMode::Overwrite ? T(0) : dp[c]) + g;
        dbias[c] += g;
      }
    }
  }
};

}  // namespace

template <class T>
void bias_gelu_backward(Vec<T> dpre, Vec<T> dbias, CVec<T> pre, CVec<T> dout, int N, int OC,
                        GradMode dpre_mode) {
  ZEROPP_ON_DEVICE(T, "bias_gelu_backward",
                   cuda::bias_gelu_backward(dpre.data(), dbias.data(), pre.data(), dout.data(), N, OC,
                                            dpre_mode, ZD->stream));
  parallel_chunks(OC, column_chunk(OC), [&](int64_t, int64_t b, int64_t e) {
    const auto run = [&](auto kernel) {
      simd_dispatch<decltype(kernel)>(dpre.data() + b, dbias.data() + b, pre.data() + b, dout.data() + b, N,
                                      int(e - b), int64_t(OC));
    };
    if (dpre_mode == GradMode::Overwrite)
      run(BiasGeluBackward<T, GradMode::Overwrite>{});
    else
      run(BiasGeluBackward<T, GradMode::Accumulate>{});
  });
}

template <class T>
void bias_gelu_backward_reference(Vec<T> dpre, Vec<T> dbias, CVec<T> pre, CVec<T> dout, int N, int OC,
                                  GradMode dpre_mode) {
  Buf<T> g("g", size_t(N) * OC);  // zero-initialised
  gelu_backward_reference<T>(g, pre, dout, int64_t(N) * OC);
  for (int64_t n = 0; n < N; ++n)
    for (int c = 0; c < OC; ++c) {
      T& dp = dpre(n * OC + c);
      dp = dpre_mode == GradMode::Overwrite ? g(n * OC + c) : dp + g(n * OC + c);
      dbias(c) += g(n * OC + c);
    }
}

#define ZEROPP_INSTANTIATE_BIAS_GELU(T)                                                      \
  template void bias_gelu_backward<T>(Vec<T>, Vec<T>, CVec<T>, CVec<T>, int, int, GradMode); \
  template void bias_gelu_backward_reference<T>(Vec<T>, Vec<T>, CVec<T>, CVec<T>, int, int, GradMode);
ZEROPP_INSTANTIATE_BIAS_GELU(float)
ZEROPP_INSTANTIATE_BIAS_GELU(double)

}  // namespace zeropp
