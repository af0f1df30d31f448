// Layer normalisation over the last axis (PyTorch nn.LayerNorm, eps = 1e-5).
//
// Forward: for each row n of inp [N,C] (row-major),
//   mean[n] = sum_c inp[n,c] / C,  var = sum_c (inp[n,c]-mean)^2 / C (biased),
//   rstd[n] = 1/sqrt(var + eps),   out[n,c] = (inp[n,c]-mean)*rstd*weight[c] + bias[c].
// out [N,C], mean [N] and rstd [N] are overwritten; mean and rstd are saved for
// the backward pass. Row statistics use two passes over the row (mean first,
// then the centred sum of squares) for accuracy.
//
// Backward, with norm = (inp-mean)*rstd and dnorm = dout*weight:
//   dinp[n,c]  += rstd * (dnorm - mean_c(dnorm) - norm * mean_c(dnorm*norm))
//   dweight[c] += sum_n dout*norm,   dbias[c] += sum_n dout.
// All three are accumulated, in one pass over the rows (the column sums row
// after row, as the reference adds them), each row in the widest vector
// instructions the CPU has (kernels/runtime/simd_dispatch.hpp).
#pragma once

#include "kernels/runtime/common.hpp"

namespace zeropp {

template <class T>
void layernorm_forward(Vec<T> out, Vec<T> mean, Vec<T> rstd, CVec<T> inp, CVec<T> weight, CVec<T> bias, int N,
                       int C);

template <class T>
void layernorm_backward(Vec<T> dinp, Vec<T> dweight, Vec<T> dbias, CVec<T> dout, CVec<T> inp, CVec<T> weight,
                        CVec<T> mean, CVec<T> rstd, int N, int C);

template <class T>
void layernorm_forward_reference(Vec<T> out, Vec<T> mean, Vec<T> rstd, CVec<T> inp, CVec<T> weight,
                                 CVec<T> bias, int N, int C);

template <class T>
void layernorm_backward_reference(Vec<T> dinp, Vec<T> dweight, Vec<T> dbias, CVec<T> dout, CVec<T> inp,
                                  CVec<T> weight, CVec<T> mean, CVec<T> rstd, int N, int C);

}  // namespace zeropp
