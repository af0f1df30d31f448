#include "kernels/crossentropy.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace zeropp {

// The forward pass is the largest non-GEMM cost of a step with GPT-2's
// vocabulary: N*V = 1024 * 50304 exponentials per micro-batch of `small`.
// glibc's expf is a scalar call that the compiler cannot vectorise (we build
// without -ffast-math), so the exponential below is plain arithmetic and the
// row is processed in passes that each vectorise: max, exp (elementwise),
// sum, scale. The max and the sum run in kLanes independent partial results
// (float reductions are not reordered by the compiler on its own); the lane
// sums are also slightly more accurate than one running sum.
namespace {
constexpr int kLanes = 8;

// exp(x) for x <= 0 (every argument here is logit - rowmax), vectorisable:
// x = n*ln2 + r with |r| <= ln2/2, exp(r) by Cephes' degree-5 polynomial
// (within 1.4 ulp of exp over [-87.3, 0], checked exhaustively), 2^n built in
// the exponent bits. |x| is clamped to 88 in the integer domain, where n
// reaches -127 and 2^n is +0: below about -87.5 the result is 0 (expf gives
// a denormal there, i.e. 0 next to a row sum >= 1). No float compare or
// select appears: with the default -ftrapping-math either one keeps GCC from
// vectorising the loop. A NaN argument gives NaN (so does -inf, where expf
// gives 0: a non-finite logit then surfaces as a NaN loss).
KOKKOS_INLINE_FUNCTION float exp_nonpositive(float x) {
  int32_t xb;
  memcpy(&xb, &x, sizeof xb);
  const int32_t mag = xb & 0x7fffffff;                                              // bits of |x|
  const int32_t cb = int32_t(0x80000000u) | (mag > 0x42B00000 ? 0x42B00000 : mag);  // -min(|x|, 88)
  float xc;
  memcpy(&xc, &cb, sizeof xc);
  const float n = float(int(xc * 1.44269504088896341f - 0.5f));  // round(xc / ln2), in [-127, 0]
  float r = xc - n * 0.693359375f;                               // Cody-Waite: ln2 in two parts
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * r * r + r + 1.0f;
  const int32_t bits = (int32_t(n) + 127) << 23;  // 2^n; n = -127 gives +0
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  return er * scale + (x - x);  // x - x: 0, or NaN for a NaN/infinite x
}
// Doubles (gradient checks) keep the library exponential.
KOKKOS_INLINE_FUNCTION double exp_nonpositive(double x) { return Kokkos::Experimental::exp(x); }
}  // namespace

template <class T>
void softmax_crossentropy_forward(Vec<T> probs, Vec<T> losses, CVec<T> logits, CVec<int32_t> targets, int N,
                                  int V) {
  T* p = probs.data();
  T* loss = losses.data();
  const T* l = logits.data();
  const int32_t* tgt = targets.data();
  const bool has_targets = targets.size() > 0;
  Kokkos::parallel_for(
      "softmax_crossentropy_forward", Range(0, N), KOKKOS_LAMBDA(const int64_t n) {
        const T* lr = l + n * V;
        T* pr = p + n * V;
        // Read before the row is overwritten when probs aliases logits.
        const T target_logit = has_targets ? lr[tgt[n]] : T(0);
        const int Vl = V - V % kLanes;  // the lanes cover [0, Vl), scalar tails the rest
        T lane[kLanes];
        for (int j = 0; j < kLanes; ++j) lane[j] = lr[0];
        for (int i = 0; i < Vl; i += kLanes)
          for (int j = 0; j < kLanes; ++j) lane[j] = lr[i + j] > lane[j] ? lr[i + j] : lane[j];
        T maxv = lane[0];
        for (int j = 1; j < kLanes; ++j) maxv = lane[j] > maxv ? lane[j] : maxv;
        for (int i = Vl; i < V; ++i) maxv = lr[i] > maxv ? lr[i] : maxv;
        for (int i = 0; i < V; ++i) pr[i] = exp_nonpositive(lr[i] - maxv);
        for (int j = 0; j < kLanes; ++j) lane[j] = T(0);
        for (int i = 0; i < Vl; i += kLanes)
          for (int j = 0; j < kLanes; ++j) lane[j] += pr[i + j];
        T sum = 0;
        for (int j = 0; j < kLanes; ++j) sum += lane[j];
        for (int i = Vl; i < V; ++i) sum += pr[i];
        const T inv = T(1) / sum;
        for (int i = 0; i < V; ++i) pr[i] *= inv;
        if (has_targets) loss[n] = Kokkos::Experimental::log(sum) - (target_logit - maxv);
      });
}

template <class T>
void softmax_crossentropy_backward(Vec<T> dlogits, CVec<T> probs, CVec<int32_t> targets, T dloss, int N,
                                   int V) {
  T* dl = dlogits.data();
  const T* p = probs.data();
  const int32_t* tgt = targets.data();
  const bool in_place = dl == p;
  Kokkos::parallel_for(
      "softmax_crossentropy_backward", Range(0, N), KOKKOS_LAMBDA(const int64_t n) {
        T* dlr = dl + n * V;
        const T* pr = p + n * V;
        // Two loops rather than a branch per element, so each vectorises.
        if (in_place)
          for (int i = 0; i < V; ++i) dlr[i] = dloss * pr[i];
        else
          for (int i = 0; i < V; ++i) dlr[i] += dloss * pr[i];
        dlr[tgt[n]] -= dloss;
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
