// Residual connection, elementwise over n values: out = a + b.
// out is overwritten (it may alias a or b). Backward accumulates the same
// gradient into both branches: da += dout, db += dout.
#pragma once

#include "kernels/runtime/common.hpp"

namespace zeropp {

template <class T>
void residual_forward(Vec<T> out, CVec<T> a, CVec<T> b, int64_t n);

template <class T>
void residual_backward(Vec<T> da, Vec<T> db, CVec<T> dout, int64_t n);

template <class T>
void residual_forward_reference(Vec<T> out, CVec<T> a, CVec<T> b, int64_t n);

template <class T>
void residual_backward_reference(Vec<T> da, Vec<T> db, CVec<T> dout, int64_t n);

}  // namespace zeropp
