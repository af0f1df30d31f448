#include "kernels/residual.hpp"

#include "kernels/device_dispatch.hpp"
#include "kernels/parallel_chunks.hpp"
#include "kernels/residual_row.hpp"
#include "kernels/simd_dispatch.hpp"

namespace zeropp {

namespace {

// `rows` rows of C values; without a bias they are one flat row.
template <class T>
struct ResidualForward {
  static ZEROPP_SIMD_INLINE void run(T* out, const T* a, const T* b, const T* bias, int64_t rows, int64_t C) {
    if (!bias) {
      residual_row(out, a, b, bias, rows * C);
      return;
    }
    for (int64_t n = 0; n < rows; ++n) residual_row(out + n * C, a + n * C, b + n * C, bias, C);
  }
};

template <class T>
struct ResidualBackward {
  static ZEROPP_SIMD_INLINE void run(T* da, T* db, const T* dout, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      da[i] += dout[i];
      db[i] += dout[i];
    }
  }
};

// Both forwards: whole rows per chunk (C = 1 without a bias: chunks of
// kChunkElements elements).
template <class T>
void residual_rows(T* out, const T* a, const T* b, const T* bias, int64_t rows, int64_t C) {
  parallel_chunks(rows, rows_per_chunk(C), [&](int64_t, int64_t r, int64_t e) {
    simd_dispatch<ResidualForward<T>>(out + r * C, a + r * C, b + r * C, bias, e - r, C);
  });
}

}  // namespace

template <class T>
void residual_forward(Vec<T> out, CVec<T> a, CVec<T> b, int64_t n) {
  ZEROPP_ON_DEVICE(T, "residual_forward",
                   cuda::residual_forward(out.data(), a.data(), b.data(), n, ZD->stream));
  residual_rows<T>(out.data(), a.data(), b.data(), nullptr, n, 1);
}

template <class T>
void bias_residual_forward(Vec<T> out, CVec<T> a, CVec<T> b, CVec<T> bias, int N, int C) {
  ZEROPP_ON_DEVICE(
      T, "bias_residual_forward",
      cuda::bias_residual_forward(out.data(), a.data(), b.data(), bias.data(), N, C, ZD->stream));
  residual_rows<T>(out.data(), a.data(), b.data(), bias.data(), N, C);
}

template <class T>
void residual_backward(Vec<T> da, Vec<T> db, CVec<T> dout, int64_t n) {
  ZEROPP_ON_DEVICE(T, "residual_backward",
                   cuda::residual_backward(da.data(), db.data(), dout.data(), n, ZD->stream));
  parallel_chunks(n, kChunkElements, [&](int64_t, int64_t i, int64_t e) {
    simd_dispatch<ResidualBackward<T>>(da.data() + i, db.data() + i, dout.data() + i, e - i);
  });
}

template <class T>
void residual_forward_reference(Vec<T> out, CVec<T> a, CVec<T> b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out(i) = a(i) + b(i);
}

template <class T>
void residual_backward_reference(Vec<T> da, Vec<T> db, CVec<T> dout, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    da(i) += dout(i);
    db(i) += dout(i);
  }
}

template <class T>
void bias_residual_forward_reference(Vec<T> out, CVec<T> a, CVec<T> b, CVec<T> bias, int N, int C) {
  for (int64_t i = 0; i < int64_t(N) * C; ++i) out(i) = a(i) + (b(i) + bias(i % C));
}

#define ZEROPP_INSTANTIATE_RESIDUAL(T)                                                 \
  template void residual_forward<T>(Vec<T>, CVec<T>, CVec<T>, int64_t);                \
  template void residual_backward<T>(Vec<T>, Vec<T>, CVec<T>, int64_t);                \
  template void residual_forward_reference<T>(Vec<T>, CVec<T>, CVec<T>, int64_t);      \
  template void residual_backward_reference<T>(Vec<T>, Vec<T>, CVec<T>, int64_t);      \
  template void bias_residual_forward<T>(Vec<T>, CVec<T>, CVec<T>, CVec<T>, int, int); \
  template void bias_residual_forward_reference<T>(Vec<T>, CVec<T>, CVec<T>, CVec<T>, int, int);
ZEROPP_INSTANTIATE_RESIDUAL(float)
ZEROPP_INSTANTIATE_RESIDUAL(double)

}  // namespace zeropp
