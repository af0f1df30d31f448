#include "kernels/attention_decode.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/gemm.hpp"

namespace zeropp {

template <class T>
void attention_decode(Vec<T> out, Vec<T> att, CVec<T> qkv, CVec<T> kcache, CVec<T> vcache, int B, int Tn,
                      int pos, int Tmax, int C, int NH) {
  const int hs = C / NH, Tk = pos + Tn;
  const int64_t C3 = 3 * int64_t(C), TTk = int64_t(Tn) * Tk;
  const T scale = T(1) / std::sqrt(T(hs));
  // Scores of every head at once: one GEMM batched over heads per sequence.
  for (int b = 0; b < B; ++b)
    gemm_strided_batched<T>(Trans::N, Trans::T, Tn, Tk, hs, scale, qkv.data() + b * Tn * C3, int(C3), hs,
                            kcache.data() + int64_t(b) * Tmax * C, C, hs, T(0), att.data() + b * NH * TTk, Tk,
                            TTk, NH);
  T* a = att.data();
  Kokkos::parallel_for(
      "attention_decode_softmax", Range(0, int64_t(B) * NH * Tn), KOKKOS_LAMBDA(const int64_t row) {
        const int last = pos + int(row % Tn);  // the query's own position
        T* ar = a + row * Tk;
        T maxv = ar[0];
        for (int t2 = 1; t2 <= last; ++t2) maxv = ar[t2] > maxv ? ar[t2] : maxv;
        T sum = 0;
        for (int t2 = 0; t2 <= last; ++t2) {
          ar[t2] = Kokkos::Experimental::exp(ar[t2] - maxv);
          sum += ar[t2];
        }
        const T inv = T(1) / sum;
        for (int t2 = 0; t2 <= last; ++t2) ar[t2] *= inv;
        for (int t2 = last + 1; t2 < Tk; ++t2) ar[t2] = T(0);
      });
  for (int b = 0; b < B; ++b)
    gemm_strided_batched<T>(Trans::N, Trans::N, Tn, hs, Tk, T(1), att.data() + b * NH * TTk, Tk, TTk,
                            vcache.data() + int64_t(b) * Tmax * C, C, hs, T(0),
                            out.data() + int64_t(b) * Tn * C, C, hs, NH);
}

template <class T>
void attention_decode_reference(Vec<T> out, Vec<T> att, CVec<T> qkv, CVec<T> kcache, CVec<T> vcache, int B,
                                int Tn, int pos, int Tmax, int C, int NH) {
  const int hs = C / NH, Tk = pos + Tn;
  const int64_t C3 = 3 * int64_t(C);
  const T scale = T(1) / std::sqrt(T(hs));
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h)
      for (int t = 0; t < Tn; ++t) {
        const int64_t row = ((int64_t(b) * NH + h) * Tn + t) * Tk;
        const int64_t qi = (int64_t(b) * Tn + t) * C3 + h * hs;
        const int last = pos + t;
        T maxv = -INFINITY;
        for (int t2 = 0; t2 <= last; ++t2) {
          const int64_t ki = (int64_t(b) * Tmax + t2) * C + h * hs;
          T dot = 0;
          for (int i = 0; i < hs; ++i) dot += qkv(qi + i) * kcache(ki + i);
          att(row + t2) = dot * scale;
          maxv = std::max(maxv, att(row + t2));
        }
        T sum = 0;
        for (int t2 = 0; t2 <= last; ++t2) sum += std::exp(att(row + t2) - maxv);
        for (int t2 = 0; t2 < Tk; ++t2)
          att(row + t2) = t2 <= last ? std::exp(att(row + t2) - maxv) / sum : T(0);
        const int64_t oi = (int64_t(b) * Tn + t) * C + h * hs;
        for (int i = 0; i < hs; ++i) {
          T acc = 0;
          for (int t2 = 0; t2 <= last; ++t2)
            acc += att(row + t2) * vcache((int64_t(b) * Tmax + t2) * C + h * hs + i);
          out(oi + i) = acc;
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
