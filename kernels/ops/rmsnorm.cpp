#include "kernels/ops/rmsnorm.hpp"

#include <cmath>

#include "kernels/runtime/device_dispatch.hpp"
#include "kernels/runtime/parallel_chunks.hpp"

namespace zeropp {

namespace {
constexpr double kEps = 1e-5;
}  // namespace

template <class T>
void rmsnorm_forward(Vec<T> out, Vec<T> rstd, CVec<T> inp, CVec<T> weight, int N, int C) {
  ZEROPP_ON_DEVICE(
      T, "rmsnorm_forward",
      cuda::rmsnorm_forward(out.data(), rstd.data(), inp.data(), weight.data(), N, C, ZD->stream));
  T* o = out.data();
  T* rs = rstd.data();
  const T* x = inp.data();
  const T* w = weight.data();
  Kokkos::parallel_for(
      "rmsnorm_forward", Range(0, N), KOKKOS_LAMBDA(const int64_t n) {
        const T* xr = x + n * C;
        T ss = 0;
        for (int c = 0; c < C; ++c) ss += xr[c] * xr[c];
        const T r = T(1) / std::sqrt(ss / T(C) + T(kEps));
        rs[n] = r;
        T* orow = o + n * C;
        for (int c = 0; c < C; ++c) orow[c] = xr[c] * r * w[c];
      });
}

template <class T>
void rmsnorm_backward(Vec<T> dinp, Vec<T> dweight, CVec<T> dout, CVec<T> inp, CVec<T> weight, CVec<T> rstd,
                      int N, int C) {
  ZEROPP_ON_DEVICE(T, "rmsnorm_backward",
                   cuda::rmsnorm_backward(dinp.data(), dweight.data(), dout.data(), inp.data(), weight.data(),
                                          rstd.data(), N, C, ZD->stream));
  T* dx = dinp.data();
  T* dw = dweight.data();
  const T* dy = dout.data();
  const T* x = inp.data();
  const T* w = weight.data();
  const T* rs = rstd.data();
  Kokkos::parallel_for(
      "rmsnorm_backward_dinp", Range(0, N), KOKKOS_LAMBDA(const int64_t n) {
        const T* xr = x + n * C;
        const T* dyr = dy + n * C;
        const T r = rs[n];
        T dot = 0;  // sum_c dnorm*norm
        for (int c = 0; c < C; ++c) dot += dyr[c] * w[c] * xr[c] * r;
        const T mean_dot = dot / T(C);
        T* dxr = dx + n * C;
        for (int c = 0; c < C; ++c) dxr[c] += r * (dyr[c] * w[c] - xr[c] * r * mean_dot);
      });
  // Whole columns per chunk, each summed in row order: the same sums for any cut.
  parallel_chunks(C, column_chunk(C), [&](int64_t, int64_t c0, int64_t c1) {
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = c0; c < c1; ++c) dw[c] += dy[n * C + c] * x[n * C + c] * rs[n];
  });
}

template <class T>
void rmsnorm_forward_reference(Vec<T> out, Vec<T> rstd, CVec<T> inp, CVec<T> weight, int N, int C) {
  for (int n = 0; n < N; ++n) {
    double ss = 0;
    for (int c = 0; c < C; ++c) ss += double(inp(int64_t(n) * C + c)) * double(inp(int64_t(n) * C + c));
    const double r = 1.0 / std::sqrt(ss / C + kEps);
    rstd(n) = T(r);
    for (int c = 0; c < C; ++c) out(int64_t(n) * C + c) = T(double(inp(int64_t(n) * C + c)) * r * weight(c));
  }
}

template <class T>
void rmsnorm_backward_reference(Vec<T> dinp, Vec<T> dweight, CVec<T> dout, CVec<T> inp, CVec<T> weight,
                                CVec<T> rstd, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const int64_t row = int64_t(n) * C;
    const double r = rstd(n);
    double dot = 0;
    for (int c = 0; c < C; ++c) dot += double(dout(row + c)) * weight(c) * inp(row + c) * r;
    for (int c = 0; c < C; ++c) {
      const double norm = double(inp(row + c)) * r;
      dinp(row + c) += T(r * (double(dout(row + c)) * weight(c) - norm * dot / C));
      dweight(c) += T(double(dout(row + c)) * norm);
    }
  }
}

#define ZEROPP_INSTANTIATE_RMSNORM(T)                                                              \
  template void rmsnorm_forward<T>(Vec<T>, Vec<T>, CVec<T>, CVec<T>, int, int);                    \
  template void rmsnorm_backward<T>(Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>, CVec<T>, int, int); \
  template void rmsnorm_forward_reference<T>(Vec<T>, Vec<T>, CVec<T>, CVec<T>, int, int);          \
  template void rmsnorm_backward_reference<T>(Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>, CVec<T>, int, int);
ZEROPP_INSTANTIATE_RMSNORM(float)
ZEROPP_INSTANTIATE_RMSNORM(double)

}  // namespace zeropp
