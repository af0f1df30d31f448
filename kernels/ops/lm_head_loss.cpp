#include "kernels/ops/lm_head_loss.hpp"

#include <algorithm>
#include <vector>

#include "kernels/gemm/rounded_operand.hpp"
#include "kernels/ops/crossentropy.hpp"
#include "kernels/ops/matmul.hpp"
#include "kernels/runtime/device_dispatch.hpp"

namespace zeropp {

namespace {

// Row n of g [N, V] times w[n] (w empty: nothing to do).
template <class T>
void scale_rows(T* g, const T* w, int64_t nw, int64_t N, int V) {
  if (nw == 0) return;
  Kokkos::parallel_for(
      "lm_head_scale_rows", Range(0, N), KOKKOS_LAMBDA(const int64_t n) {
        T* gr = g + n * V;
        const T wn = w[n];
        for (int i = 0; i < V; ++i) gr[i] *= wn;
      });
}

// Probabilities [N, V] into the gradient of the losses in place: p minus
// one at each row's target. The same bits as softmax_crossentropy_backward
// in place with dloss 1 (1 * p is p), without its pass over the N*V logits.
template <class T>
void subtract_targets(T* g, const int32_t* tgt, int64_t N, int V) {
  Kokkos::parallel_for(
      "lm_head_subtract_targets", Range(0, N), KOKKOS_LAMBDA(const int64_t n) { g[n * V + tgt[n]] -= T(1); });
}

}  // namespace

int64_t lm_head_chunk_rows(int64_t N, int64_t V) {
  constexpr int64_t kLogits = int64_t(1) << 26, kMinRows = 256;
  const int64_t most = std::max(kMinRows, kLogits / std::max<int64_t>(V, 1));
  if (N <= most) return N;
  const int64_t chunks = (N + most - 1) / most;
  return (N + chunks - 1) / chunks;  // equal chunks: no short last one
}

template <class T>
void lm_head_loss(Vec<T> dx, Vec<T> dW, Vec<T> losses, Vec<T> scratch, CVec<T> x, CVec<T> W,
                  CVec<int32_t> targets, CVec<T> weights, int N, int C, int V, int rows, Precision prec) {
  ZEROPP_ON_DEVICE(
      T, "lm_head_loss",
      cuda::lm_head_loss(*ZD->blas, data_or_null(dx), data_or_null(dW), losses.data(), scratch.data(),
                         x.data(), W.data(), targets.data(), data_or_null(weights), N, C, V, rows, prec));
  const bool backward = dx.size() > 0;
  static thread_local std::vector<T> w_r, x_r, g_r;
  const T* wr = rounded_operand(prec, W.data(), int64_t(V) * C, w_r);
  const T* xr = rounded_operand(prec, x.data(), int64_t(N) * C, x_r);
  for (int r0 = 0; r0 < N; r0 += rows) {
    const int n = std::min(rows, N - r0);
    const Vec<T> logits(scratch.data(), int64_t(n) * V);
    const CVec<int32_t> tgt(targets.data() + r0, n);
    gemm_on_rounded<T>(prec, Trans::N, Trans::T, n, V, C, T(1), xr + int64_t(r0) * C, C, wr, C, T(0),
                       logits.data(), V);
    softmax_crossentropy_forward<T>(logits, Vec<T>(losses.data() + r0, n), logits, tgt, n, V);
    if (!backward) continue;
    subtract_targets(logits.data(), tgt.data(), n, V);  // in place: g overwrites the probs
    scale_rows(logits.data(), weights.data() + (weights.size() ? r0 : 0), int64_t(weights.size()), n, V);
    const T* g = rounded_operand(prec, logits.data(), int64_t(n) * V, g_r);
    gemm_on_rounded<T>(prec, Trans::N, Trans::N, n, C, V, T(1), g, V, wr, C, T(0),
                       dx.data() + int64_t(r0) * C, C);
    gemm_on_rounded<T>(prec, Trans::T, Trans::N, V, C, n, T(1), g, V, xr + int64_t(r0) * C, C,
                       r0 == 0 ? T(0) : T(1), dW.data(), C);
  }
}

template <class T>
void lm_head_loss_reference(Vec<T> dx, Vec<T> dW, Vec<T> losses, CVec<T> x, CVec<T> W, CVec<int32_t> targets,
                            CVec<T> weights, int N, int C, int V, Precision prec) {
  Buf<T> probs("lm_head_reference_probs", size_t(N) * V);
  matmul_forward<T>(probs, x, W, CVec<T>(), N, C, V, Trans::T, prec);
  softmax_crossentropy_forward<T>(probs, losses, probs, targets, N, V);
  if (dx.size() == 0) return;
  softmax_crossentropy_backward<T>(probs, probs, targets, T(1), N, V);
  scale_rows(probs.data(), weights.data(), int64_t(weights.size()), N, V);
  Kokkos::deep_copy(dW, T(0));
  matmul_backward<T>(dx, dW, Vec<T>(), probs, x, W, N, C, V, Trans::T, prec, GradMode::Overwrite);
}

#define ZEROPP_INSTANTIATE_LM_HEAD_LOSS(T)                                                                  \
  template void lm_head_loss<T>(Vec<T>, Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<int32_t>, CVec<T>,   \
                                int, int, int, int, Precision);                                             \
  template void lm_head_loss_reference<T>(Vec<T>, Vec<T>, Vec<T>, CVec<T>, CVec<T>, CVec<int32_t>, CVec<T>, \
                                          int, int, int, Precision);
ZEROPP_INSTANTIATE_LM_HEAD_LOSS(float)
ZEROPP_INSTANTIATE_LM_HEAD_LOSS(double)

}  // namespace zeropp
