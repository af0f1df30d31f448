#include "kernels/ops/matmul.hpp"

#include <cstring>
#include <vector>

#include "kernels/gemm/gemm_bf16.hpp"
#include "kernels/gemm/rounded_operand.hpp"
#include "kernels/runtime/device_dispatch.hpp"
#include "kernels/runtime/parallel_chunks.hpp"
#include "kernels/runtime/simd_dispatch.hpp"

namespace zeropp {

namespace {
// dbias[j] += sum_n dout[n, j], row after row (the reference's order) over a
// strip of `width` columns; the strip's sums stay in cache.
template <class T>
struct BiasGradient {
  static ZEROPP_SIMD_INLINE void run(T* db, const T* dy, int N, int width, int64_t ld) {
    for (int64_t n = 0; n < N; ++n) {
      const T* dyr = dy + n * ld;
      for (int j = 0; j < width; ++j) db[j] += dyr[j];
    }
  }
};

// out = inp · op(W) + beta · out.
template <class T>
void forward_product(Vec<T> out, CVec<T> inp, CVec<T> weight, int N, int C, int OC, Trans wlayout,
                     Precision prec, T beta) {
  const int ldw = wlayout == Trans::N ? OC : C;
  gemm_as<T>(prec, Trans::N, wlayout, N, OC, C, T(1), inp.data(), C, weight.data(), ldw, beta, out.data(),
             OC);
}
}  // namespace

template <class T>
void matmul_forward(Vec<T> out, CVec<T> inp, CVec<T> weight, CVec<T> bias, int N, int C, int OC,
                    Trans wlayout, Precision prec) {
  ZEROPP_ON_DEVICE(T, "matmul_forward",
                   cuda::matmul_forward(*ZD->blas, out.data(), inp.data(), weight.data(), data_or_null(bias),
                                        N, C, OC, wlayout, prec));
  const bool has_bias = bias.size() > 0;
  // The bias rows are C for beta = 1 (OpenBLAS would clear C for beta = 0
  // in a pass of its own); memcpy runs the widest stores.
  if (has_bias)
    parallel_chunks(N, rows_per_chunk(OC), [&](int64_t, int64_t b, int64_t e) {
      for (int64_t n = b; n < e; ++n) std::memcpy(out.data() + n * OC, bias.data(), sizeof(T) * size_t(OC));
    });
  forward_product<T>(out, inp, weight, N, C, OC, wlayout, prec, has_bias ? T(1) : T(0));
}

template <class T>
void matmul_forward_accumulate(Vec<T> out, CVec<T> inp, CVec<T> weight, int N, int C, int OC, Trans wlayout,
                               Precision prec) {
  ZEROPP_ON_DEVICE(T, "matmul_forward_accumulate",
                   cuda::matmul_forward_accumulate(*ZD->blas, out.data(), inp.data(), weight.data(), N, C, OC,
                                                   wlayout, prec));
  forward_product<T>(out, inp, weight, N, C, OC, wlayout, prec, T(1));
}

template <class T>
void matmul_backward(Vec<T> dinp, Vec<T> dweight, Vec<T> dbias, CVec<T> dout, CVec<T> inp, CVec<T> weight,
                     int N, int C, int OC, Trans wlayout, Precision prec, GradMode dinp_mode) {
  ZEROPP_ON_DEVICE(
      T, "matmul_backward",
      cuda::matmul_backward(*ZD->blas, dinp.data(), dweight.data(), data_or_null(dbias), dout.data(),
                            inp.data(), weight.data(), N, C, OC, wlayout, prec, dinp_mode));
  // First, while dout (just written by the layer above) is likely still in
  // cache; the bias gradient stays fp32 (dout, not its rounded copy).
  if (dbias.size() > 0)
    parallel_chunks(OC, column_chunk(OC), [&](int64_t, int64_t b, int64_t e) {
      simd_dispatch<BiasGradient<T>>(dbias.data() + b, dout.data() + b, N, int(e - b), int64_t(OC));
    });
  // Each operand rounded once in bf16: dout feeds both products.
  static thread_local std::vector<T> dout_r, inp_r, weight_r;
  const T* dy = rounded_operand(prec, dout.data(), int64_t(N) * OC, dout_r);
  const T* x = rounded_operand(prec, inp.data(), int64_t(N) * C, inp_r);
  const T* w = rounded_operand(prec, weight.data(), int64_t(C) * OC, weight_r);
  const T beta_dinp = dinp_mode == GradMode::Overwrite ? T(0) : T(1);
  if (wlayout == Trans::N) {
    // W [C,OC]: dinp = dout · W^T, dW = inp^T · dout.
    gemm_on_rounded<T>(prec, Trans::N, Trans::T, N, C, OC, T(1), dy, OC, w, OC, beta_dinp, dinp.data(), C);
    gemm_on_rounded<T>(prec, Trans::T, Trans::N, C, OC, N, T(1), x, C, dy, OC, T(1), dweight.data(), OC);
  } else {
    // W [OC,C]: dinp = dout · W, dW = dout^T · inp.
    gemm_on_rounded<T>(prec, Trans::N, Trans::N, N, C, OC, T(1), dy, OC, w, C, beta_dinp, dinp.data(), C);
    gemm_on_rounded<T>(prec, Trans::T, Trans::N, OC, C, N, T(1), dy, OC, x, C, T(1), dweight.data(), C);
  }
}

namespace {
// Element (c, j) of the logical [C,OC] weight, whatever its storage layout.
template <class T>
T w_at(CVec<T> weight, int c, int j, int C, int OC, Trans wlayout) {
  return wlayout == Trans::N ? weight(int64_t(c) * OC + j) : weight(int64_t(j) * C + c);
}
}  // namespace

template <class T>
void matmul_forward_reference(Vec<T> out, CVec<T> inp, CVec<T> weight, CVec<T> bias, int N, int C, int OC,
                              Trans wlayout) {
  for (int64_t n = 0; n < N; ++n)
    for (int j = 0; j < OC; ++j) {
      T acc = bias.size() > 0 ? bias(j) : T(0);
      for (int c = 0; c < C; ++c) acc += inp(n * C + c) * w_at(weight, c, j, C, OC, wlayout);
      out(n * OC + j) = acc;
    }
}

template <class T>
void matmul_forward_accumulate_reference(Vec<T> out, CVec<T> inp, CVec<T> weight, int N, int C, int OC,
                                         Trans wlayout) {
  Buf<T> product("product", size_t(N) * OC);
  matmul_forward_reference<T>(product, inp, weight, CVec<T>(), N, C, OC, wlayout);
  for (int64_t i = 0; i < int64_t(N) * OC; ++i) out(i) += product(i);
}

template <class T>
void matmul_backward_reference(Vec<T> dinp, Vec<T> dweight, Vec<T> dbias, CVec<T> dout, CVec<T> inp,
                               CVec<T> weight, int N, int C, int OC, Trans wlayout, GradMode dinp_mode) {
  if (dinp_mode == GradMode::Overwrite)
    for (int64_t i = 0; i < int64_t(N) * C; ++i) dinp(i) = T(0);
  for (int64_t n = 0; n < N; ++n)
    for (int j = 0; j < OC; ++j) {
      const T d = dout(n * OC + j);
      for (int c = 0; c < C; ++c) {
        dinp(n * C + c) += d * w_at(weight, c, j, C, OC, wlayout);
        const int64_t wi = wlayout == Trans::N ? int64_t(c) * OC + j : int64_t(j) * C + c;
        dweight(wi) += inp(n * C + c) * d;
      }
      if (dbias.size() > 0) dbias(j) += d;
    }
}

#define ZEROPP_INSTANTIATE_MATMUL(T)                                                                        \
  template void matmul_forward<T>(Vec<T>, CVec<T>, CVec<T>, CVec<T>, int, int, int, Trans, Precision);      \
  template void matmul_backward<T>(Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>, int, int, int, Trans, \
                                   Precision, GradMode);                                                    \
  template void matmul_forward_reference<T>(Vec<T>, CVec<T>, CVec<T>, CVec<T>, int, int, int, Trans);       \
  template void matmul_forward_accumulate<T>(Vec<T>, CVec<T>, CVec<T>, int, int, int, Trans, Precision);    \
  template void matmul_forward_accumulate_reference<T>(Vec<T>, CVec<T>, CVec<T>, int, int, int, Trans);     \
  template void matmul_backward_reference<T>(Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>, int, int,   \
                                             int, Trans, GradMode);
ZEROPP_INSTANTIATE_MATMUL(float)
ZEROPP_INSTANTIATE_MATMUL(double)

}  // namespace zeropp
