#include "kernels/ops/encoder.hpp"

#include "kernels/runtime/device_dispatch.hpp"
#include "kernels/runtime/parallel_chunks.hpp"
#include "kernels/runtime/simd_dispatch.hpp"

namespace zeropp {

namespace {

template <class T>
struct EncoderForward {
  static ZEROPP_SIMD_INLINE void run(T* out, const int32_t* tok, const T* wte, const T* wpe, int64_t bt0,
                                     int64_t bt1, int Tn, int C) {
    for (int64_t bt = bt0; bt < bt1; ++bt) {
      T* orow = out + bt * C;
      const T* erow = wte + int64_t(tok[bt]) * C;
      if (wpe == nullptr) {
        for (int c = 0; c < C; ++c) orow[c] = erow[c];
        continue;
      }
      const T* prow = wpe + (bt % Tn) * C;
      for (int c = 0; c < C; ++c) orow[c] = erow[c] + prow[c];
    }
  }
};

// Row after row (the reference's order of the sums into a repeated token's
// row). Threads take blocks of `width` columns (rows C apart), which keeps that order.
template <class T>
struct EncoderBackward {
  static ZEROPP_SIMD_INLINE void run(T* dwte, T* dwpe, const T* dout, const int32_t* tok, int B, int Tn,
                                     int C, int width) {
    for (int64_t bt = 0; bt < int64_t(B) * Tn; ++bt) {
      const T* drow = dout + bt * C;
      T* terow = dwte + int64_t(tok[bt]) * C;
      for (int c = 0; c < width; ++c) terow[c] += drow[c];
      if (dwpe == nullptr) continue;
      T* perow = dwpe + (bt % Tn) * C;
      for (int c = 0; c < width; ++c) perow[c] += drow[c];
    }
  }
};

}  // namespace

template <class T>
void encoder_forward(Vec<T> out, CVec<int32_t> tokens, CVec<T> wte, CVec<T> wpe, int B, int Tn, int C) {
  ZEROPP_ON_DEVICE(
      T, "encoder_forward",
      cuda::encoder_forward(out.data(), tokens.data(), wte.data(), data_or_null(wpe), B, Tn, C, ZD->stream));
  parallel_chunks(int64_t(B) * Tn, rows_per_chunk(C), [&](int64_t, int64_t b, int64_t e) {
    simd_dispatch<EncoderForward<T>>(out.data(), tokens.data(), wte.data(), wpe.data(), b, e, Tn, C);
  });
}

template <class T>
void encoder_backward(Vec<T> dwte, Vec<T> dwpe, CVec<T> dout, CVec<int32_t> tokens, int B, int Tn, int C) {
  ZEROPP_ON_DEVICE(T, "encoder_backward",
                   cuda::encoder_backward(dwte.data(), data_or_null(dwpe), dout.data(), tokens.data(), B, Tn,
                                          C, ZD->stream));
  parallel_chunks(C, column_chunk(C), [&](int64_t, int64_t b, int64_t e) {
    T* dwpe_b = dwpe.data() == nullptr ? nullptr : dwpe.data() + b;
    simd_dispatch<EncoderBackward<T>>(dwte.data() + b, dwpe_b, dout.data() + b, tokens.data(), B, Tn, C,
                                      int(e - b));
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
