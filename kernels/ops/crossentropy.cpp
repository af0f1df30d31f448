#include "kernels/ops/crossentropy.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/ops/softmax_row.hpp"
#include "kernels/runtime/device_dispatch.hpp"
#include "kernels/runtime/parallel_chunks.hpp"
#include "kernels/runtime/simd_dispatch.hpp"

namespace zeropp {

// The forward pass is the largest non-GEMM cost of a step with GPT-2's
// vocabulary: N*V = 1024 * 50304 exponentials per micro-batch of `small`;
// softmax_row (softmax_row.hpp) does them in vectorised passes, in the widest
// instruction set (simd_dispatch.hpp).

namespace {

template <class T>
struct CrossEntropyForward {
  static ZEROPP_SIMD_INLINE void run(T* p, T* loss, const T* l, const int32_t* tgt, int64_t r0, int64_t r1,
                                     int V) {
    for (int64_t n = r0; n < r1; ++n) {
      const T* lr = l + n * V;
      T* pr = p + n * V;
      // Read before the row is overwritten when probs aliases logits.
      const T target_logit = tgt ? lr[tgt[n]] : T(0);
      const auto [maxv, sum] = softmax_row(lr, pr, V, T(1));
      if (tgt) loss[n] = std::log(sum) - (target_logit - maxv);
    }
  }
};

template <class T>
struct CrossEntropyBackward {
  static ZEROPP_SIMD_INLINE void run(T* dl, const T* p, const int32_t* tgt, T dloss, int64_t r0, int64_t r1,
                                     int V) {
    const bool in_place = dl == p;
    for (int64_t n = r0; n < r1; ++n) {
      T* dlr = dl + n * V;
      const T* pr = p + n * V;
      // Two loops rather than a branch per element, so each vectorises.
      if (in_place)
        for (int i = 0; i < V; ++i) dlr[i] = dloss * pr[i];
      else
        for (int i = 0; i < V; ++i) dlr[i] += dloss * pr[i];
      dlr[tgt[n]] -= dloss;
    }
  }
};

}  // namespace

template <class T>
void softmax_crossentropy_forward(Vec<T> probs, Vec<T> losses, CVec<T> logits, CVec<int32_t> targets, int N,
                                  int V) {
  ZEROPP_ON_DEVICE(T, "softmax_crossentropy_forward",
                   cuda::softmax_crossentropy_forward(probs.data(), losses.data(), logits.data(),
                                                      data_or_null(targets), N, V, ZD->stream));
  const int32_t* tgt = targets.size() > 0 ? targets.data() : nullptr;
  parallel_chunks(N, rows_per_chunk(V), [&](int64_t, int64_t b, int64_t e) {
    simd_dispatch<CrossEntropyForward<T>>(probs.data(), losses.data(), logits.data(), tgt, b, e, V);
  });
}

template <class T>
void softmax_crossentropy_backward(Vec<T> dlogits, CVec<T> probs, CVec<int32_t> targets, T dloss, int N,
                                   int V) {
  ZEROPP_ON_DEVICE(T, "softmax_crossentropy_backward",
                   cuda::softmax_crossentropy_backward(dlogits.data(), probs.data(), targets.data(), dloss, N,
                                                       V, ZD->stream));
  parallel_chunks(N, rows_per_chunk(V), [&](int64_t, int64_t b, int64_t e) {
    simd_dispatch<CrossEntropyBackward<T>>(dlogits.data(), probs.data(), targets.data(), dloss, b, e, V);
  });
}

template <class T>
void softmax_crossentropy_forward_reference(Vec<T> probs, Vec<T> losses, CVec<T> logits,
                                            CVec<int32_t> targets, int N, int V) {
  for (int64_t n = 0; n < N; ++n) {
    T maxv = logits(n * V);
    for (int i = 1; i < V; ++i) maxv = std::max(maxv, logits(n * V + i));
    T sum = 0;
    for (int i = 0; i < V; ++i) {
      probs(n * V + i) = std::exp(logits(n * V + i) - maxv);
      sum += probs(n * V + i);
    }
    for (int i = 0; i < V; ++i) probs(n * V + i) /= sum;
    if (targets.size() > 0) losses(n) = -std::log(probs(n * V + targets(n)));
  }
}

template <class T>
void softmax_crossentropy_backward_reference(Vec<T> dlogits, CVec<T> probs, CVec<int32_t> targets, T dloss,
                                             int N, int V) {
  const bool in_place = dlogits.data() == probs.data();
  for (int64_t n = 0; n < N; ++n)
    for (int i = 0; i < V; ++i) {
      const T g = dloss * (probs(n * V + i) - (i == targets(n) ? T(1) : T(0)));
      dlogits(n * V + i) = in_place ? g : dlogits(n * V + i) + g;
    }
}

#define ZEROPP_INSTANTIATE_CROSSENTROPY(T)                                                                   \
  template void softmax_crossentropy_forward<T>(Vec<T>, Vec<T>, CVec<T>, CVec<int32_t>, int, int);           \
  template void softmax_crossentropy_backward<T>(Vec<T>, CVec<T>, CVec<int32_t>, T, int, int);               \
  template void softmax_crossentropy_forward_reference<T>(Vec<T>, Vec<T>, CVec<T>, CVec<int32_t>, int, int); \
  template void softmax_crossentropy_backward_reference<T>(Vec<T>, CVec<T>, CVec<int32_t>, T, int, int);
ZEROPP_INSTANTIATE_CROSSENTROPY(float)
ZEROPP_INSTANTIATE_CROSSENTROPY(double)

}  // namespace zeropp
