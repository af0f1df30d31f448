// Linear layer through GEMM: out = inp · W + bias.
//
// Shapes (row-major): inp [N,C], out [N,OC], bias [OC] (bias.size()==0: no
// bias). The weight layout is chosen by wlayout:
//   Trans::N  W stored [C,OC], input-major (GPT-2's Conv1D): out = inp · W
//   Trans::T  W stored [OC,C] (the tied LM head reads wte [V,C] this way):
//             out = inp · W^T
// Forward overwrites out: it first broadcasts the bias into out, then lets
// the GEMM accumulate onto it (beta = 1), so out is written in one GEMM pass.
// matmul_forward_accumulate adds the product onto out as it is (beta = 1, no
// bias): out += inp · W, for a C its caller wrote in a pass it runs anyway
// (layernorm_seed.hpp).
//
// Backward accumulates into every gradient through GEMMs with beta = 1:
//   dinp    += dout · op(W)^T                  [N,C]  (dinp_mode Overwrite: =, beta = 0,
//                                                      for a scratch buffer it writes first)
//   dweight += inp^T · dout  (layout N, [C,OC])  or  dout^T · inp  (layout T, [OC,C])
//   dbias   += sum_n dout[n,:]                 (skipped when dbias.size()==0)
// The bias column sums run in parallel over disjoint channel chunks.
//
// prec = Precision::BF16 (fp32 views only) runs the GEMMs of both passes on
// bf16-rounded operands with fp32 accumulation and fp32 outputs (gemm_bf16.hpp);
// the bias and its gradient stay fp32. The backward rounds dout, which feeds
// both of its products, once (rounded_operand.hpp).
#pragma once

#include "kernels/gemm/gemm.hpp"
#include "kernels/runtime/common.hpp"
#include "kernels/runtime/grad_mode.hpp"
#include "src/base/precision.hpp"

namespace zeropp {

template <class T>
void matmul_forward(Vec<T> out, CVec<T> inp, CVec<T> weight, CVec<T> bias, int N, int C, int OC,
                    Trans wlayout = Trans::N, Precision prec = Precision::FP32);

template <class T>
void matmul_forward_accumulate(Vec<T> out, CVec<T> inp, CVec<T> weight, int N, int C, int OC,
                               Trans wlayout = Trans::N, Precision prec = Precision::FP32);

template <class T>
void matmul_backward(Vec<T> dinp, Vec<T> dweight, Vec<T> dbias, CVec<T> dout, CVec<T> inp, CVec<T> weight,
                     int N, int C, int OC, Trans wlayout = Trans::N, Precision prec = Precision::FP32,
                     GradMode dinp_mode = GradMode::Accumulate);

template <class T>
void matmul_forward_reference(Vec<T> out, CVec<T> inp, CVec<T> weight, CVec<T> bias, int N, int C, int OC,
                              Trans wlayout = Trans::N);

template <class T>
void matmul_forward_accumulate_reference(Vec<T> out, CVec<T> inp, CVec<T> weight, int N, int C, int OC,
                                         Trans wlayout = Trans::N);

template <class T>
void matmul_backward_reference(Vec<T> dinp, Vec<T> dweight, Vec<T> dbias, CVec<T> dout, CVec<T> inp,
                               CVec<T> weight, int N, int C, int OC, Trans wlayout = Trans::N,
                               GradMode dinp_mode = GradMode::Accumulate);

}  // namespace zeropp
