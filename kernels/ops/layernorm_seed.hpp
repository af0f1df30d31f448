// A LayerNorm that also starts the residual add after the projection that
// follows it (GPT-2's x + (attn(ln_1(x))·W + b) and the MLP's likewise): the
// pass that reads the residual stream x for the norm also writes x + b, the
// projection's bias added to x, and the projection's GEMM then accumulates its
// product onto that (matmul_forward_accumulate, beta = 1). No separate residual
// pass reads x and the product back, and the GEMM's C is a buffer it writes
// anyway (OpenBLAS clears C for beta = 0 in a pass of its own).
//
// Shapes (row-major): inp, out, seed [N,C]; weight, bias, seed_bias [C]; mean, rstd [N].
// Forward (everything overwritten):
//   out, mean, rstd = LayerNorm(inp)   (layernorm.hpp, eps = 1e-5)
//   seed = inp + seed_bias
// After the GEMM the residual sum is (x + b) + x·W: the same terms as
// x + (x·W + b), in another order (within rounding, not bit for bit;
// tests/kernels/ops/test_layernorm_seed.cpp bounds it). The backward is
// layernorm_backward; the residual passes its gradient on unchanged, and
// seed_bias's gradient, the column sums of that gradient, stays with
// matmul_backward. The _reference twin is layernorm_forward_reference and the
// broadcast add. Both are defined in layernorm.cpp, which shares its row loop.
#pragma once

#include "kernels/runtime/common.hpp"

namespace zeropp {

template <class T>
void layernorm_seed_forward(Vec<T> out, Vec<T> mean, Vec<T> rstd, Vec<T> seed, CVec<T> inp, CVec<T> weight,
                            CVec<T> bias, CVec<T> seed_bias, int N, int C);

template <class T>
void layernorm_seed_forward_reference(Vec<T> out, Vec<T> mean, Vec<T> rstd, Vec<T> seed, CVec<T> inp,
                                      CVec<T> weight, CVec<T> bias, CVec<T> seed_bias, int N, int C);

}  // namespace zeropp
