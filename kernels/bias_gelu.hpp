// A linear layer's bias fused with the GELU after it (GPT-2's MLP,
// gelu(ln_2(x)·W_fc + b_fc)): the fc matmul runs without its bias and this
// kernel adds it in the pass that applies GELU, instead of a bias broadcast
// pass before the GEMM; its backward sums the bias gradient in the pass that
// applies gelu', instead of another read of dpre by the matmul's backward.
//
// Shapes (row-major): pre, out, dpre, dout [N,OC]; bias, dbias [OC].
// Forward: pre[n,c] += bias[c] (pre is the GEMM's x·W on entry and x·W + b,
//          kept for the backward, on exit);  out = gelu(pre)   (gelu.hpp)
// Backward: g = dout ⊙ gelu'(pre);  dpre += g (dpre_mode Overwrite: dpre = g,
//          garbage in dpre unread);  dbias[c] += sum_n g[n,c] (always accumulated)
// The _reference twins are the unfused composition: a broadcast add, then
// gelu_forward_reference; gelu_backward_reference into a zeroed scratch,
// then its column sums.
#pragma once

#include "kernels/common.hpp"
#include "kernels/grad_mode.hpp"

namespace zeropp {

template <class T>
void bias_gelu_forward(Vec<T> pre, Vec<T> out, CVec<T> bias, int N, int OC);

template <class T>
void bias_gelu_backward(Vec<T> dpre, Vec<T> dbias, CVec<T> pre, CVec<T> dout, int N, int OC,
                        GradMode dpre_mode = GradMode::Accumulate);

template <class T>
void bias_gelu_forward_reference(Vec<T> pre, Vec<T> out, CVec<T> bias, int N, int OC);

template <class T>
void bias_gelu_backward_reference(Vec<T> dpre, Vec<T> dbias, CVec<T> pre, CVec<T> dout, int N, int OC,
                                  GradMode dpre_mode = GradMode::Accumulate);

}  // namespace zeropp
