// RMS normalisation over the last axis (LLaMA's RMSNorm, eps = 1e-5).
//
// Forward: for each row n of inp [N,C] (row-major),
//   rstd[n] = 1/sqrt(sum_c inp[n,c]^2 / C + eps),  out[n,c] = inp[n,c]*rstd*weight[c].
// out [N,C] and rstd [N] are overwritten; rstd is saved for the backward.
//
// Backward, with norm = inp*rstd and dnorm = dout*weight:
//   dinp[n,c]  += rstd * (dnorm - norm * mean_c(dnorm*norm)),
//   dweight[c] += sum_n dout*norm.
// Both are accumulated. dinp runs in parallel over rows; dweight over
// disjoint channel chunks (race-free without atomics).
#pragma once

#include "kernels/runtime/common.hpp"

namespace zeropp {

template <class T>
void rmsnorm_forward(Vec<T> out, Vec<T> rstd, CVec<T> inp, CVec<T> weight, int N, int C);

template <class T>
void rmsnorm_backward(Vec<T> dinp, Vec<T> dweight, CVec<T> dout, CVec<T> inp, CVec<T> weight, CVec<T> rstd,
                      int N, int C);

template <class T>
void rmsnorm_forward_reference(Vec<T> out, Vec<T> rstd, CVec<T> inp, CVec<T> weight, int N, int C);

template <class T>
void rmsnorm_backward_reference(Vec<T> dinp, Vec<T> dweight, CVec<T> dout, CVec<T> inp, CVec<T> weight,
                                CVec<T> rstd, int N, int C);

}  // namespace zeropp
