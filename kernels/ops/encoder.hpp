// Token + position embedding (GPT-2's wte/wpe lookup).
//
// Forward: out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:], with tokens [B,Tn],
// wte [V,C], wpe [maxT,C] (only rows t < Tn are read) and out [B,Tn,C], all
// row-major. out is overwritten. An empty wpe (and dwpe) leaves positions
// out: the token embedding alone (LLaMA, whose positions are rotary).
//
// Backward scatter-adds: dwte[tokens[b,t],:] += dout[b,t,:] and
// dwpe[t,:] += dout[b,t,:], row after row in (b,t) order (deterministic; the
// rows' columns in the widest vector instructions the CPU has,
// kernels/runtime/simd_dispatch.hpp). Both gradients are accumulated (+=).
#pragma once

#include "kernels/runtime/common.hpp"

namespace zeropp {

template <class T>
void encoder_forward(Vec<T> out, CVec<int32_t> tokens, CVec<T> wte, CVec<T> wpe, int B, int Tn, int C);

template <class T>
void encoder_backward(Vec<T> dwte, Vec<T> dwpe, CVec<T> dout, CVec<int32_t> tokens, int B, int Tn, int C);

template <class T>
void encoder_forward_reference(Vec<T> out, CVec<int32_t> tokens, CVec<T> wte, CVec<T> wpe, int B, int Tn,
                               int C);

template <class T>
void encoder_backward_reference(Vec<T> dwte, Vec<T> dwpe, CVec<T> dout, CVec<int32_t> tokens, int B, int Tn,
                                int C);

}  // namespace zeropp
