// Rotary position embedding (RoFormer; LLaMA's interleaved pairs) on the
// query and key heads of a fused qkv buffer.
//
// inp and out are [B, Tn, 3C] rows (q | k | v, each NH heads of hs = C/NH).
// For position t and pair i < hs/2 of every q and k head, with
// theta = t * 10000^(-2i/hs):
//   out[2i]   = x[2i] cos(theta) - x[2i+1] sin(theta)
//   out[2i+1] = x[2i] sin(theta) + x[2i+1] cos(theta);
// v is copied. out is overwritten. Backward applies the inverse (transposed)
// rotation to dout's q and k and accumulates into dinp (v passes through),
// or overwrites dinp with dinp_mode Overwrite (garbage in dinp unread).
#pragma once

#include "kernels/runtime/common.hpp"
#include "kernels/runtime/grad_mode.hpp"

namespace zeropp {

template <class T>
void rope_forward(Vec<T> out, CVec<T> inp, int B, int Tn, int C, int NH);

// The same for rows at positions pos0..pos0+Tn-1 (generation: new tokens
// after pos0 cached ones); rope_forward is pos0 = 0.
template <class T>
void rope_forward_at(Vec<T> out, CVec<T> inp, int B, int Tn, int C, int NH, int pos0);

template <class T>
void rope_backward(Vec<T> dinp, CVec<T> dout, int B, int Tn, int C, int NH,
                   GradMode dinp_mode = GradMode::Accumulate);

template <class T>
void rope_forward_reference(Vec<T> out, CVec<T> inp, int B, int Tn, int C, int NH);

template <class T>
void rope_forward_at_reference(Vec<T> out, CVec<T> inp, int B, int Tn, int C, int NH, int pos0);

template <class T>
void rope_backward_reference(Vec<T> dinp, CVec<T> dout, int B, int Tn, int C, int NH,
                             GradMode dinp_mode = GradMode::Accumulate);

}  // namespace zeropp
