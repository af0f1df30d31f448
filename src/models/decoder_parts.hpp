// Small pieces the decoders in src/models share: views into activation
// buffers, a parameter's part of its unit's flat buffer, the tokens a
// forward keeps for its backward, the (weighted) mean of the per-token
// losses and the scaling of gradients by the loss scale.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/buffer_ops.hpp"
#include "kernels/common.hpp"
#include "src/models/model.hpp"
#include "src/models/param_layout.hpp"

namespace zeropp::decoder {

// Elements [off, off+n) of an activation buffer.
template <class T>
Vec<T> at(const Buf<T>& b, int64_t off, int64_t n) {
  return Vec<T>(b.data() + off, n);
}

template <class T>
void zero(const Vec<T>& v) {
  fill(v, T(0));
}

// Parameter p's weights (P) or gradient (G) within its unit's full buffer.
template <class T>
CVec<T> P(const CVec<T>& w, const ParamSpec& p) {
  return CVec<T>(w.data() + p.offset, p.numel);
}
template <class T>
Vec<T> G(const Vec<T>& g, const ParamSpec& p) {
  return Vec<T>(g.data() + p.offset, p.numel);
}

// Copies BT tokens (and targets, when given) into the model's buffers;
// whether targets were given.
inline bool keep_tokens(const Buf<int32_t>& tokens_out, const Buf<int32_t>& targets_out, CVec<int32_t> tokens,
                        CVec<int32_t> targets, int64_t BT) {
  using Unmanaged = Kokkos::View<int32_t*, MemSpace, Kokkos::MemoryUnmanaged>;
  Kokkos::deep_copy(Unmanaged(tokens_out.data(), BT), tokens);
  if (targets.size() == 0) return false;
  Kokkos::deep_copy(Unmanaged(targets_out.data(), BT), targets);
  return true;
}

// Unit u at its stretch of the backward: full weights, gradient buffer, parameters.
template <class T>
struct BackwardUnit {
  CVec<T> w;
  Vec<T> g;
  const std::vector<ParamSpec>& ps;
};
template <class T>
BackwardUnit<T> acquire_for_backward(UnitSource<T>& src, const ParamLayout& layout, int u) {
  return {src.acquire(u), src.grad(u), layout.units[size_t(u)].params};
}
// Unit u's gradient is complete and its weights are no longer needed.
template <class T>
void finish_backward(UnitSource<T>& src, int u) {
  src.grad_done(u);
  src.release(u);
}

// Mean of losses[0 .. BT).
template <class T>
double mean_loss(const Buf<T>& losses, int64_t BT) {
  double sum = 0;
  Kokkos::parallel_reduce(
      "mean_loss", Range(0, BT), KOKKOS_LAMBDA(int64_t i, double& acc) { acc += double(losses(i)); }, sum);
  return sum / double(BT);
}

// sum_n w[n]·losses[n] / BT over [0 .. BT).
template <class T>
double weighted_mean_loss(const Buf<T>& losses, CVec<T> w, int64_t BT) {
  double sum = 0;
  Kokkos::parallel_reduce(
      "weighted_mean_loss", Range(0, BT),
      KOKKOS_LAMBDA(int64_t i, double& acc) { acc += double(w(i)) * double(losses(i)); }, sum);
  return sum / double(BT);
}

// x *= a.
template <class T>
void scale(const Vec<T>& x, T a) {
  Kokkos::parallel_for(
      "decoder_scale", Range(0, int64_t(x.size())), KOKKOS_LAMBDA(int64_t i) { x(i) *= a; });
}

// y += a·x.
template <class T>
void add_scaled(const Vec<T>& y, CVec<T> x, T a) {
  Kokkos::parallel_for(
      "decoder_add_scaled", Range(0, int64_t(y.size())), KOKKOS_LAMBDA(int64_t i) { y(i) += a * x(i); });
}

}  // namespace zeropp::decoder
