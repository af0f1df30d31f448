#include "kernels/ops/attention_decode.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/gemm/gemm.hpp"
#include "kernels/ops/causal_softmax.hpp"
#include "kernels/runtime/device_dispatch.hpp"

namespace zeropp {

template <class T>
void attention_decode(Vec<T> out, Vec<T> att, CVec<T> qkv, CVec<T> kcache, CVec<T> vcache, int B, int Tn,
                      int pos, int Tmax, int C, int NH) {
  ZEROPP_ON_DEVICE(T, "attention_decode",
                   cuda::attention_decode(*ZD->blas, out.data(), att.data(), qkv.data(), kcache.data(),
                                          vcache.data(), B, Tn, pos, Tmax, C, NH));
  const int hs = C / NH, Tk = pos + Tn;
  const int64_t C3 = 3 * int64_t(C), TTk = int64_t(Tn) * Tk;
  const T scale = T(1) / std::sqrt(T(hs));
  // Scores of every head at once: one GEMM batched over heads per sequence.
  for (int b = 0; b < B; ++b)
    gemm_strided_batched<T>(Trans::N, Trans::T, Tn, Tk, hs, scale, qkv.data() + b * Tn * C3, int(C3), hs,
                            kcache.data() + int64_t(b) * Tmax * C, C, hs, T(0), att.data() + b * NH * TTk, Tk,
                            TTk, NH);
  // Each query sees the keys up to its own position, pos + t.
  T* a = att.data();
  Kokkos::parallel_for(
      "attention_decode_softmax", Range(0, int64_t(B) * NH * Tn), KOKKOS_LAMBDA(const int64_t row) {
        causal_softmax_row(a + row * Tk, a + row * Tk, pos + int(row % Tn), Tk);
      });
  for (int b = 0; b < B; ++b)
    gemm_strided_batched<T>(Trans::N, Trans::N, Tn, hs, Tk, T(1), att.data() + b * NH * TTk, Tk, TTk,
                            vcache.data() + int64_t(b) * Tmax * C, C, hs, T(0),
                            out.data() + int64_t(b) * Tn * C, C, hs, NH);
}

// Per (b, h, t) in double: the scores, their softmax over the visible keys,
// and the weighted sum of the values; the tests' reference.
template <class T>
void attention_decode_reference(Vec<T> out, Vec<T> att, CVec<T> qkv, CVec<T> kcache, CVec<T> vcache, int B,
                                int Tn, int pos, int Tmax, int C, int NH) {
  const int hs = C / NH, Tk = pos + Tn;
  const auto key = [&](int b, int t2, int h, int i) {
    return double(kcache((int64_t(b) * Tmax + t2) * C + h * hs + i));
  };
  const auto value = [&](int b, int t2, int h, int i) {
    return double(vcache((int64_t(b) * Tmax + t2) * C + h * hs + i));
  };
  std::vector<double> p(static_cast<size_t>(Tk));
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h)
      for (int t = 0; t < Tn; ++t) {
        const T* q = qkv.data() + (int64_t(b) * Tn + t) * 3 * C + h * hs;
        std::fill(p.begin(), p.end(), 0.0);
        double top = -INFINITY, z = 0;
        for (int t2 = 0; t2 <= pos + t; ++t2) {
          for (int i = 0; i < hs; ++i) p[size_t(t2)] += double(q[i]) * key(b, t2, h, i);
          p[size_t(t2)] /= std::sqrt(double(hs));
          top = std::max(top, p[size_t(t2)]);
        }
        for (int t2 = 0; t2 <= pos + t; ++t2) z += p[size_t(t2)] = std::exp(p[size_t(t2)] - top);
        T* a = att.data() + ((int64_t(b) * NH + h) * Tn + t) * Tk;
        for (int t2 = 0; t2 < Tk; ++t2) a[t2] = T(p[size_t(t2)] / z);  // 0 past pos + t
        for (int i = 0; i < hs; ++i) {
          double y = 0;
          for (int t2 = 0; t2 <= pos + t; ++t2) y += p[size_t(t2)] / z * value(b, t2, h, i);
          out((int64_t(b) * Tn + t) * C + h * hs + i) = T(y);
        }
      }
}

#define ZEROPP_INSTANTIATE_ATTENTION_DECODE(T)                                                               \
  template void attention_decode<T>(Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>, int, int, int, int, int,      \
                                    int);                                                                    \
  template void attention_decode_reference<T>(Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>, int, int, int, int, \
                                              int, int);
ZEROPP_INSTANTIATE_ATTENTION_DECODE(float)
ZEROPP_INSTANTIATE_ATTENTION_DECODE(double)

}  // namespace zeropp
