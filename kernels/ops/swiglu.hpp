// SwiGLU gate (LLaMA's feed-forward): inp [N, 2F] holds per row the gate a
// (columns 0..F-1) and the value b (columns F..2F-1); out [N, F] is
//   out = silu(a) * b,  silu(a) = a * sigmoid(a).
// Backward accumulates, with s = sigmoid(a):
//   da += dout * b * s * (1 + a (1 - s)),   db += dout * silu(a)
// into dinp [N, 2F], or overwrites it with dinp_mode Overwrite (garbage in
// dinp unread). out is overwritten.
#pragma once

#include "kernels/runtime/common.hpp"
#include "kernels/runtime/grad_mode.hpp"

namespace zeropp {

template <class T>
void swiglu_forward(Vec<T> out, CVec<T> inp, int64_t N, int F);

template <class T>
void swiglu_backward(Vec<T> dinp, CVec<T> inp, CVec<T> dout, int64_t N, int F,
                     GradMode dinp_mode = GradMode::Accumulate);

template <class T>
void swiglu_forward_reference(Vec<T> out, CVec<T> inp, int64_t N, int F);

template <class T>
void swiglu_backward_reference(Vec<T> dinp, CVec<T> inp, CVec<T> dout, int64_t N, int F,
                               GradMode dinp_mode = GradMode::Accumulate);

}  // namespace zeropp
