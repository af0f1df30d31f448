// AdamW step over n parameters (torch.optim.AdamW: decoupled weight decay).
//
// With g = grad * grad_scale (grad_scale folds in e.g. 1/accumulation steps
// or gradient clipping) and step counting from 1:
//   m = beta1 m + (1-beta1) g,  v = beta2 v + (1-beta2) g^2
//   mhat = m / (1-beta1^step),  vhat = v / (1-beta2^step)
//   param -= lr * (mhat / (sqrt(vhat) + eps) + weight_decay * param)
// param, m and v are updated in place; the bias corrections are computed once
// on the host.
#pragma once

#include "kernels/runtime/common.hpp"

namespace zeropp {

template <class T>
void adamw_update(Vec<T> param, Vec<T> m, Vec<T> v, CVec<T> grad, int64_t n, T lr, T beta1, T beta2, T eps,
                  T weight_decay, int step, T grad_scale);

template <class T>
void adamw_update_reference(Vec<T> param, Vec<T> m, Vec<T> v, CVec<T> grad, int64_t n, T lr, T beta1, T beta2,
                            T eps, T weight_decay, int step, T grad_scale);

}  // namespace zeropp
