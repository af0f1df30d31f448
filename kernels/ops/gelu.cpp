#include "kernels/ops/gelu.hpp"

#include <cmath>

#include "kernels/ops/gelu_math.hpp"
#include "kernels/runtime/device_dispatch.hpp"
#include "kernels/runtime/parallel_chunks.hpp"
#include "kernels/runtime/simd_dispatch.hpp"

namespace zeropp {

namespace {

// Plain loops: they vectorise with gelu_math.hpp's tanh, in the dispatched ISA.
template <class T>
struct GeluForward {
  static ZEROPP_SIMD_INLINE void run(T* out, const T* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = gelu_value(x[i]);
  }
};

template <class T>
struct GeluBackward {
  static ZEROPP_SIMD_INLINE void run(T* dx, const T* x, const T* dy, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] * gelu_slope(x[i]);
  }
};

}  // namespace

template <class T>
void gelu_forward(Vec<T> out, CVec<T> inp, int64_t n) {
  ZEROPP_ON_DEVICE(T, "gelu_forward", cuda::gelu_forward(out.data(), inp.data(), n, ZD->stream));
  parallel_chunks(n, kChunkElements, [&](int64_t, int64_t b, int64_t e) {
    simd_dispatch<GeluForward<T>>(out.data() + b, inp.data() + b, e - b);
  });
}

template <class T>
void gelu_backward(Vec<T> dinp, CVec<T> inp, CVec<T> dout, int64_t n) {
  ZEROPP_ON_DEVICE(T, "gelu_backward",
                   cuda::gelu_backward(dinp.data(), inp.data(), dout.data(), n, ZD->stream));
  parallel_chunks(n, kChunkElements, [&](int64_t, int64_t b, int64_t e) {
    simd_dispatch<GeluBackward<T>>(dinp.data() + b, inp.data() + b, dout.data() + b, e - b);
  });
}

template <class T>
void gelu_forward_reference(Vec<T> out, CVec<T> inp, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T x = inp(i);
    out(i) = T(0.5) * x * (T(1) + std::tanh(T(kGeluSqrt2OverPi) * (x + T(kGeluCubic) * x * x * x)));
  }
}

template <class T>
void gelu_backward_reference(Vec<T> dinp, CVec<T> inp, CVec<T> dout, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T x = inp(i);
    const T th = std::tanh(T(kGeluSqrt2OverPi) * (x + T(kGeluCubic) * x * x * x));
    const T sech2 = T(1) - th * th;
    dinp(i) += dout(i) * (T(0.5) * (T(1) + th) +
                          T(0.5) * x * sech2 * T(kGeluSqrt2OverPi) * (T(1) + T(3 * kGeluCubic) * x * x));
  }
}

#define ZEROPP_INSTANTIATE_GELU(T)                                   \
  template void gelu_forward<T>(Vec<T>, CVec<T>, int64_t);           \
  template void gelu_backward<T>(Vec<T>, CVec<T>, CVec<T>, int64_t); \
  template void gelu_forward_reference<T>(Vec<T>, CVec<T>, int64_t); \
  template void gelu_backward_reference<T>(Vec<T>, CVec<T>, CVec<T>, int64_t);
ZEROPP_INSTANTIATE_GELU(float)
ZEROPP_INSTANTIATE_GELU(double)

}  // namespace zeropp
