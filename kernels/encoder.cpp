#include "kernels/encoder.hpp"

namespace zeropp {

namespace {
// Columns per backward work item: one or more cache lines of a row.
constexpr int kChunk = 64;
}  // namespace

template <class T>
void encoder_forward(Vec<T> out, CVec<int32_t> tokens, CVec<T> wte, CVec<T> wpe, int B, int Tn, int C) {
  T* o = out.data();
  const int32_t* tok = tokens.data();
  const T* e = wte.data();
  const T* p = wpe.data();
  Kokkos::parallel_for(
      "encoder_forward", Range(0, int64_t(B) * Tn), KOKKOS_LAMBDA(const int64_t bt) {
        const int64_t t = bt % Tn;
        T* orow = o + bt * C;
        const T* erow = e + int64_t(tok[bt]) * C;
        if (p == nullptr) {
          for (int c = 0; c < C; ++c) orow[c] = erow[c];
          return;
        }
        const T* prow = p + t * C;
        for (int c = 0; c < C; ++c) orow[c] = erow[c] + prow[c];
      });
}

template <class T>
void encoder_backward(Vec<T> dwte, Vec<T> dwpe, CVec<T> dout, CVec<int32_t> tokens, int B, int Tn, int C) {
  T* dte = dwte.data();
  T* dpe = dwpe.data();
  const T* d = dout.data();
  const int32_t* tok = tokens.data();
  const int64_t BT = int64_t(B) * Tn;
  Kokkos::parallel_for(
      "encoder_backward", Range(0, (C + kChunk - 1) / kChunk), KOKKOS_LAMBDA(const int64_t chunk) {
        const int c0 = int(chunk) * kChunk;
        const int c1 = c0 + kChunk < C ? c0 + kChunk : C;
        for (int64_t bt = 0; bt < BT; ++bt) {
          const T* drow = d + bt * C;
          T* terow = dte + int64_t(tok[bt]) * C;
          for (int c = c0; c < c1; ++c) terow[c] += drow[c];
          if (dpe == nullptr) continue;
          T* perow = dpe + (bt % Tn) * C;
          for (int c = c0; c < c1; ++c) perow[c] += drow[c];
        }
      });
}

template <class T>
void encoder_forward_reference(Vec<T> out, CVec<int32_t> tokens, CVec<T> wte, CVec<T> wpe, int B, int Tn,
                               int C) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < Tn; ++t) {
      const int64_t bt = int64_t(b) * Tn + t;
      for (int c = 0; c < C; ++c)
        out(bt * C + c) = wte(int64_t(tokens(bt)) * C + c) + (wpe.size() ? wpe(int64_t(t) * C + c) : T(0));
    }
}

template <class T>
void encoder_backward_reference(Vec<T> dwte, Vec<T> dwpe, CVec<T> dout, CVec<int32_t> tokens, int B, int Tn,
                                int C) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < Tn; ++t) {
      const int64_t bt = int64_t(b) * Tn + t;
      for (int c = 0; c < C; ++c) {
        dwte(int64_t(tokens(bt)) * C + c) += dout(bt * C + c);
        if (dwpe.size()) dwpe(int64_t(t) * C + c) += dout(bt * C + c);
      }
    }
}

#define ZEROPP_INSTANTIATE_ENCODER(T)                                                                 \
  template void encoder_forward<T>(Vec<T>, CVec<int32_t>, CVec<T>, CVec<T>, int, int, int);           \
  template void encoder_backward<T>(Vec<T>, Vec<T>, CVec<T>, CVec<int32_t>, int, int, int);           \
  template void encoder_forward_reference<T>(Vec<T>, CVec<int32_t>, CVec<T>, CVec<T>, int, int, int); \
  template void encoder_backward_reference<T>(Vec<T>, Vec<T>, CVec<T>, CVec<int32_t>, int, int, int);
ZEROPP_INSTANTIATE_ENCODER(float)
ZEROPP_INSTANTIATE_ENCODER(double)

}  // namespace zeropp
