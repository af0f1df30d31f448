// GELU, tanh approximation (GPT-2's "gelu_new"), elementwise over n values:
//   out = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3).
// Backward accumulates dinp += dout * gelu'(x) with
//   gelu'(x) = 0.5 (1 + tanh(u)) + 0.5 x (1 - tanh(u)^2) sqrt(2/pi) (1 + 3*0.044715 x^2).
// out is overwritten; inp is the forward input (saved by the caller).
#pragma once

#include "kernels/runtime/common.hpp"

namespace zeropp {

template <class T>
void gelu_forward(Vec<T> out, CVec<T> inp, int64_t n);

template <class T>
void gelu_backward(Vec<T> dinp, CVec<T> inp, CVec<T> dout, int64_t n);

template <class T>
void gelu_forward_reference(Vec<T> out, CVec<T> inp, int64_t n);

template <class T>
void gelu_backward_reference(Vec<T> dinp, CVec<T> inp, CVec<T> dout, int64_t n);

}  // namespace zeropp
