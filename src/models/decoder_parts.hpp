// Small pieces the decoders in src/models share: views into activation
// buffers, a parameter's part of its unit's flat buffer, the tokens a
// forward keeps for its backward, the activation slots of model.recompute
// and the (weighted) mean of the per-token losses. Everything here goes through kernels and buffer
// operations: the buffers may live on a GPU (kernels/runtime/device_context.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/ops/buffer_ops.hpp"
#include "kernels/runtime/common.hpp"
#include "kernels/runtime/device_buffer.hpp"
#include "src/models/model.hpp"
#include "src/models/param_layout.hpp"

namespace zeropp::decoder {

// Elements [off, off+n) of an activation buffer.
template <class T>
Vec<T> at(const Buffer<T>& b, int64_t off, int64_t n) {
  return b.view(off, n);
}

template <class T>
void zero(const Vec<T>& v) {
  fill(v, T(0));
}

// model.recompute = layer keeps one set of a block's activations (slot 0)
// that each block's backward refills by rerunning the block's forward;
// otherwise every layer l keeps its own (slot l).
inline bool recomputes(const ModelConfig& m) { return m.recompute == Recompute::Layer; }
inline int activation_slots(const ModelConfig& m) { return recomputes(m) ? 1 : m.n_layer; }
inline int activation_slot(const ModelConfig& m, int l) { return recomputes(m) ? 0 : l; }

// Parameter p's weights (P) or gradient (G) within its unit's full buffer.
template <class T>
CVec<T> P(const CVec<T>& w, const ParamSpec& p) {
  return CVec<T>(w.data() + p.offset, p.numel);
}
template <class T>
Vec<T> G(const Vec<T>& g, const ParamSpec& p) {
  return Vec<T>(g.data() + p.offset, p.numel);
}

// Copies BT tokens (and targets, when given), device memory like every
// view a model is handed, into the model's buffers; whether targets were given.
inline bool keep_tokens(const Buffer<int32_t>& tokens_out, const Buffer<int32_t>& targets_out,
                        CVec<int32_t> tokens, CVec<int32_t> targets, int64_t BT) {
  copy(tokens_out.view(0, BT), tokens);
  if (targets.size() == 0) return false;
  copy(targets_out.view(0, BT), targets);
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

// Mean of losses[0 .. BT) (a value the host needs: buffer_ops' sum waits for the device).
template <class T>
double mean_loss(const Buffer<T>& losses, int64_t BT) {
  return sum(CVec<T>(losses.data(), BT)) / double(BT);
}

// sum_n w[n]·losses[n] / BT over [0 .. BT) (w on the device).
template <class T>
double weighted_mean_loss(const Buffer<T>& losses, CVec<T> w, int64_t BT) {
  return dot(w, CVec<T>(losses.data(), BT)) / double(BT);
}

}  // namespace zeropp::decoder
