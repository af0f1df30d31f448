// A residual add fused with the LayerNorm that reads its result (GPT-2's
// x + attn(ln_1(x)) followed by ln_2): one pass per row instead of a residual
// pass over [N,C] and a LayerNorm pass that reads it back.
//
// Shapes (row-major): a, b, res, out [N,C]; b_bias, weight, bias [C]; mean, rstd [N].
// b_bias is the bias of the linear layer that produced b (GPT-2's attention
// projection, whose matmul then runs without it); size 0: none.
// Forward (everything overwritten):
//   res = a + (b + b_bias)           (kept: the backward and the next residual read it;
//                                     the order: kernels/residual_row.hpp)
//   out, mean, rstd = LayerNorm(res) (layernorm.hpp, eps = 1e-5)
// The backward is layernorm_backward and residual_backward unchanged (b_bias's
// gradient, the column sums of res's gradient, stays with matmul_backward).
// The _reference twin is the unfused composition residual_forward_reference
// (bias_residual_forward_reference with b_bias) then layernorm_forward_reference.
#pragma once

#include "kernels/common.hpp"

namespace zeropp {

template <class T>
void residual_layernorm_forward(Vec<T> res, Vec<T> out, Vec<T> mean, Vec<T> rstd, CVec<T> a, CVec<T> b,
                                CVec<T> b_bias, CVec<T> weight, CVec<T> bias, int N, int C);

template <class T>
void residual_layernorm_forward_reference(Vec<T> res, Vec<T> out, Vec<T> mean, Vec<T> rstd, CVec<T> a,
                                          CVec<T> b, CVec<T> b_bias, CVec<T> weight, CVec<T> bias, int N,
                                          int C);

}  // namespace zeropp
