#include "kernels/ops/attention.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/gemm/gemm.hpp"
#include "kernels/ops/causal_softmax.hpp"
#include "kernels/runtime/device_dispatch.hpp"

namespace zeropp {

namespace {

// Calls f(r0, rows) for each block of kCausalRowBlock query rows
// (causal_softmax.hpp). Row t sees keys 0..t, so a block of rows
// [r0, r0 + rows) needs only the first r0 + rows columns of the scores: the
// products skip the masked blocks right of the diagonal (at Tn = 256, 10 of 16
// blocks computed) at a small cost in rate per call (docs/performance.md), and
// the causal softmax leaves the entries beyond them unwritten.
template <class F>
void for_row_blocks(int Tn, F&& f) {
  for (int r0 = 0; r0 < Tn; r0 += kCausalRowBlock) f(r0, std::min(kCausalRowBlock, Tn - r0));
}

}  // namespace

template <class T>
void attention_forward(Vec<T> out, Vec<T> preatt, Vec<T> att, CVec<T> qkv, int B, int Tn, int C, int NH) {
  ZEROPP_ON_DEVICE(
      T, "attention_forward",
      cuda::attention_forward(*ZD->blas, out.data(), preatt.data(), att.data(), qkv.data(), B, Tn, C, NH));
  const int hs = C / NH;
  const int64_t C3 = 3 * int64_t(C);
  const int64_t TT = int64_t(Tn) * Tn;
  const T scale = T(1) / std::sqrt(T(hs));
  for (int b = 0; b < B; ++b) {
    const T* q = qkv.data() + b * Tn * C3;
    T* pre = preatt.data() + b * NH * TT;
    for_row_blocks(Tn, [&](int r0, int rows) {  // pre[r0:, :r0 + rows] = scale · q[r0:] · k[:r0 + rows]^T
      gemm_strided_batched<T>(Trans::N, Trans::T, rows, r0 + rows, hs, scale, q + r0 * C3, int(C3), hs, q + C,
                              int(C3), hs, T(0), pre + int64_t(r0) * Tn, Tn, TT, NH);
    });
  }
  causal_softmax_forward<T>(att, preatt, int64_t(B) * NH * Tn, Tn);
  for (int b = 0; b < B; ++b) {
    const T* v = qkv.data() + b * Tn * C3 + 2 * C;
    const T* a = att.data() + b * NH * TT;
    T* o = out.data() + int64_t(b) * Tn * C;
    for_row_blocks(Tn, [&](int r0, int rows) {  // out[r0:] = att[r0:, :r0 + rows] · v[:r0 + rows]
      gemm_strided_batched<T>(Trans::N, Trans::N, rows, hs, r0 + rows, T(1), a + int64_t(r0) * Tn, Tn, TT, v,
                              int(C3), hs, T(0), o + int64_t(r0) * C, C, hs, NH);
    });
  }
}

template <class T>
void attention_backward(Vec<T> dqkv, Vec<T> dpreatt, Vec<T> datt, CVec<T> dout, CVec<T> qkv, CVec<T> att,
                        int B, int Tn, int C, int NH, GradMode dqkv_mode) {
  ZEROPP_ON_DEVICE(T, "attention_backward",
                   cuda::attention_backward(*ZD->blas, dqkv.data(), dpreatt.data(), datt.data(), dout.data(),
                                            qkv.data(), att.data(), B, Tn, C, NH, dqkv_mode));
  const int hs = C / NH;
  const int64_t C3 = 3 * int64_t(C);
  const int64_t TT = int64_t(Tn) * Tn;
  const T scale = T(1) / std::sqrt(T(hs));
  // Each row block of dv, dq and dk is the output of one GEMM below (the
  // blocks tile [0, Tn)), so Overwrite is beta = 0 on all three.
  const T beta = dqkv_mode == GradMode::Overwrite ? T(0) : T(1);
  for (int b = 0; b < B; ++b) {
    const T* dy = dout.data() + int64_t(b) * Tn * C;
    const T* v = qkv.data() + b * Tn * C3 + 2 * C;
    const T* a = att.data() + b * NH * TT;
    T* da = datt.data() + b * NH * TT;
    T* dv = dqkv.data() + b * Tn * C3 + 2 * C;
    for_row_blocks(Tn, [&](int r0, int rows) {
      // datt[r0:, :r0 + rows] = dy[r0:] · v[:r0 + rows]^T
      gemm_strided_batched<T>(Trans::N, Trans::T, rows, r0 + rows, hs, T(1), dy + int64_t(r0) * C, C, hs, v,
                              int(C3), hs, T(0), da + int64_t(r0) * Tn, Tn, TT, NH);
      // dv[r0:r0 + rows] += att[r0:, r0:r0 + rows]^T · dy[r0:] (att is 0 above the diagonal)
      gemm_strided_batched<T>(Trans::T, Trans::N, rows, hs, Tn - r0, T(1), a + int64_t(r0) * Tn + r0, Tn, TT,
                              dy + int64_t(r0) * C, C, hs, beta, dv + r0 * C3, int(C3), hs, NH);
    });
  }
  causal_softmax_backward<T>(dpreatt, att, datt, int64_t(B) * NH * Tn, Tn, scale);
  for (int b = 0; b < B; ++b) {
    const T* q = qkv.data() + b * Tn * C3;
    T* dq = dqkv.data() + b * Tn * C3;
    const T* dpb = dpreatt.data() + b * NH * TT;
    for_row_blocks(Tn, [&](int r0, int rows) {
      // dq[r0:] += dpre[r0:, :r0 + rows] · k[:r0 + rows]
      gemm_strided_batched<T>(Trans::N, Trans::N, rows, hs, r0 + rows, T(1), dpb + int64_t(r0) * Tn, Tn, TT,
                              q + C, int(C3), hs, beta, dq + r0 * C3, int(C3), hs, NH);
      // dk[r0:r0 + rows] += dpre[r0:, r0:r0 + rows]^T · q[r0:] (dpre is 0 above the diagonal)
      gemm_strided_batched<T>(Trans::T, Trans::N, rows, hs, Tn - r0, T(1), dpb + int64_t(r0) * Tn + r0, Tn,
                              TT, q + r0 * C3, int(C3), hs, beta, dq + C + r0 * C3, int(C3), hs, NH);
    });
  }
}

template <class T>
void attention_forward_reference(Vec<T> out, Vec<T> preatt, Vec<T> att, CVec<T> qkv, int B, int Tn, int C,
                                 int NH) {
  const int hs = C / NH;
  const int64_t C3 = 3 * int64_t(C);
  const T scale = T(1) / std::sqrt(T(hs));
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h)
      for (int t = 0; t < Tn; ++t) {
        const int64_t row = ((int64_t(b) * NH + h) * Tn + t) * Tn;
        const int64_t qi = (int64_t(b) * Tn + t) * C3 + h * hs;
        for (int t2 = 0; t2 < Tn; ++t2) {
          const int64_t ki = (int64_t(b) * Tn + t2) * C3 + C + h * hs;
          T dot = 0;
          for (int i = 0; i < hs; ++i) dot += qkv(qi + i) * qkv(ki + i);
          preatt(row + t2) = dot * scale;
        }
        T maxv = preatt(row);
        for (int t2 = 1; t2 <= t; ++t2) maxv = std::max(maxv, preatt(row + t2));
        T sum = 0;
        for (int t2 = 0; t2 <= t; ++t2) sum += std::exp(preatt(row + t2) - maxv);
        for (int t2 = 0; t2 < Tn; ++t2)
          att(row + t2) = t2 <= t ? std::exp(preatt(row + t2) - maxv) / sum : T(0);
        const int64_t oi = (int64_t(b) * Tn + t) * C + h * hs;
        for (int i = 0; i < hs; ++i) {
          T acc = 0;
          for (int t2 = 0; t2 <= t; ++t2)
            acc += att(row + t2) * qkv((int64_t(b) * Tn + t2) * C3 + 2 * C + h * hs + i);
          out(oi + i) = acc;
        }
      }
}

template <class T>
void attention_backward_reference(Vec<T> dqkv, Vec<T> dpreatt, Vec<T> datt, CVec<T> dout, CVec<T> qkv,
                                  CVec<T> att, int B, int Tn, int C, int NH, GradMode dqkv_mode) {
  if (dqkv_mode == GradMode::Overwrite) Kokkos::deep_copy(dqkv, T(0));
  const int hs = C / NH;
  const int64_t C3 = 3 * int64_t(C);
  const T scale = T(1) / std::sqrt(T(hs));
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h)
      for (int t = 0; t < Tn; ++t) {
        const int64_t row = ((int64_t(b) * NH + h) * Tn + t) * Tn;
        const int64_t oi = (int64_t(b) * Tn + t) * C + h * hs;
        // out = att · v
        for (int t2 = 0; t2 < Tn; ++t2) {
          const int64_t vi = (int64_t(b) * Tn + t2) * C3 + 2 * C + h * hs;
          T acc = 0;
          for (int i = 0; i < hs; ++i) {
            acc += dout(oi + i) * qkv(vi + i);
            dqkv(vi + i) += att(row + t2) * dout(oi + i);
          }
          datt(row + t2) = acc;
        }
        // softmax
        T dot = 0;
        for (int t2 = 0; t2 <= t; ++t2) dot += att(row + t2) * datt(row + t2);
        for (int t2 = 0; t2 < Tn; ++t2)
          dpreatt(row + t2) = t2 <= t ? scale * att(row + t2) * (datt(row + t2) - dot) : T(0);
        // preatt = scale * q · k^T (scale already folded into dpreatt)
        const int64_t qi = (int64_t(b) * Tn + t) * C3 + h * hs;
        for (int t2 = 0; t2 <= t; ++t2) {
          const int64_t ki = (int64_t(b) * Tn + t2) * C3 + C + h * hs;
          for (int i = 0; i < hs; ++i) {
            dqkv(qi + i) += dpreatt(row + t2) * qkv(ki + i);
            dqkv(ki + i) += dpreatt(row + t2) * qkv(qi + i);
          }
        }
      }
}

#define ZEROPP_INSTANTIATE_ATTENTION(T)                                                                      \
  template void attention_forward<T>(Vec<T>, Vec<T>, Vec<T>, CVec<T>, int, int, int, int);                   \
  template void attention_backward<T>(Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>, int, int, int, int, \
                                      GradMode);                                                             \
  template void attention_forward_reference<T>(Vec<T>, Vec<T>, Vec<T>, CVec<T>, int, int, int, int);         \
  template void attention_backward_reference<T>(Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<T>, int, int, \
                                                int, int, GradMode);
ZEROPP_INSTANTIATE_ATTENTION(float)
ZEROPP_INSTANTIATE_ATTENTION(double)

}  // namespace zeropp
