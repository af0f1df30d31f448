// GELU's backward with the bias gradient of the linear layer before it
// (GPT-2's MLP, gelu(ln_2(x)·W_fc + b_fc)): the bias gradient is summed in the
// pass that applies gelu', instead of another read of dpre by the matmul's
// backward. (The forward has no fused kernel: fc's bias rows are the GEMM's C,
// matmul.hpp, and GELU then only reads pre; gelu.hpp.)
//
// Shapes (row-major): pre, dpre, dout [N,OC]; dbias [OC].
// g = dout ⊙ gelu'(pre) (pre = x·W + b, the forward's GELU input);
// dpre += g (dpre_mode Overwrite: dpre = g, garbage in dpre unread);
// dbias[c] += sum_n g[n,c] (always accumulated).
// The _reference twin is the unfused composition: gelu_backward_reference into
// a zeroed scratch, then its column sums.
#pragma once

#include "kernels/runtime/common.hpp"
#include "kernels/runtime/grad_mode.hpp"

namespace zeropp {

template <class T>
void bias_gelu_backward(Vec<T> dpre, Vec<T> dbias, CVec<T> pre, CVec<T> dout, int N, int OC,
                        GradMode dpre_mode = GradMode::Accumulate);

template <class T>
void bias_gelu_backward_reference(Vec<T> dpre, Vec<T> dbias, CVec<T> pre, CVec<T> dout, int N, int OC,
                                  GradMode dpre_mode = GradMode::Accumulate);

}  // namespace zeropp
