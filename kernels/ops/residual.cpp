#include "kernels/ops/residual.hpp"

#include "kernels/runtime/device_dispatch.hpp"
#include "kernels/runtime/parallel_chunks.hpp"
#include "kernels/runtime/simd_dispatch.hpp"

namespace zeropp {

namespace {

template <class T>
struct ResidualForward {
  static ZEROPP_SIMD_INLINE void run(T* out, const T* a, const T* b, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
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

}  // namespace

template <class T>
void residual_forward(Vec<T> out, CVec<T> a, CVec<T> b, int64_t n) {
  ZEROPP_ON_DEVICE(T, "residual_forward",
                   cuda::residual_forward(out.data(), a.data(), b.data(), n, ZD->stream));
  parallel_chunks(n, kChunkElements, [&](int64_t, int64_t i, int64_t e) {
    simd_dispatch<ResidualForward<T>>(out.data() + i, a.data() + i, b.data() + i, e - i);
  });
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

#define ZEROPP_INSTANTIATE_RESIDUAL(T)                                            \
  template void residual_forward<T>(Vec<T>, CVec<T>, CVec<T>, int64_t);           \
  template void residual_backward<T>(Vec<T>, Vec<T>, CVec<T>, int64_t);           \
  template void residual_forward_reference<T>(Vec<T>, CVec<T>, CVec<T>, int64_t); \
  template void residual_backward_reference<T>(Vec<T>, Vec<T>, CVec<T>, int64_t);
ZEROPP_INSTANTIATE_RESIDUAL(float)
ZEROPP_INSTANTIATE_RESIDUAL(double)

}  // namespace zeropp
