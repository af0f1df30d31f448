// Residual connection, elementwise over n values: out = a + b.
// out is overwritten (it may alias a or b). Backward accumulates the same
// gradient into both branches: da += dout, db += dout.
//
// bias_residual_forward adds a linear layer's bias on the way (GPT-2's MLP
// projection, whose matmul then runs without its bias broadcast pass; OpenBLAS
// clears C for beta = 0 itself, cuBLAS and oneDNN need no pass):
// a, b, out [N,C], bias [C], out[n,c] = a[n,c] + (b[n,c] + bias[c])
// (kernels/residual_row.hpp: why this order). Its backward is residual_backward;
// the bias gradient, the column sums of dout, stays with matmul_backward.
#pragma once

#include "kernels/common.hpp"

namespace zeropp {

template <class T>
void residual_forward(Vec<T> out, CVec<T> a, CVec<T> b, int64_t n);

template <class T>
void residual_backward(Vec<T> da, Vec<T> db, CVec<T> dout, int64_t n);

template <class T>
void bias_residual_forward(Vec<T> out, CVec<T> a, CVec<T> b, CVec<T> bias, int N, int C);

template <class T>
void residual_forward_reference(Vec<T> out, CVec<T> a, CVec<T> b, int64_t n);

template <class T>
void residual_backward_reference(Vec<T> da, Vec<T> db, CVec<T> dout, int64_t n);

template <class T>
void bias_residual_forward_reference(Vec<T> out, CVec<T> a, CVec<T> b, CVec<T> bias, int N, int C);

}  // namespace zeropp
