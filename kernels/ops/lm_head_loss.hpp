// The LM head and its cross-entropy, forward and backward at once, over
// chunks of rows, so that only [rows, V] logits are ever live instead of
// [N, V] (GPT-2's V = 50304 makes those the largest activation of a step).
//
// Shapes (row-major): x, dx [N,C]; W, dW [V,C] (the head reads W as x·Wᵀ);
// targets, losses [N]; weights [N] or empty (every weight 1); scratch holds
// rows·V. For each chunk x_c of `rows` rows (the last may be shorter):
//   logits  = x_c · Wᵀ
//   losses  = log Σ_v exp(logits[n,v]) − logits[n, targets[n]]  (overwritten)
//   g[n,:]  = weights[n] · (softmax(logits[n,:]) − onehot(targets[n]))
//   dx_c    = g · W                                          (overwritten)
//   dW     += gᵀ · x_c    (the first chunk overwrites: dW is Σ over all chunks)
// g is the gradient of Σ_n weights[n]·losses[n]; a caller's loss scale
// (1/(B·T)) multiplies dx and dW afterwards. Empty dx and dW: the losses only
// (validation), no backward products.
//
// prec = BF16 (fp32 only) runs the products on bf16-rounded operands as
// matmul does; W, x and each chunk's g are rounded once (rounded_operand.hpp).
#pragma once

#include <cstdint>

#include "kernels/runtime/common.hpp"
#include "src/base/precision.hpp"

namespace zeropp {

// Rows per chunk for N rows over a vocabulary of V: at most about 64 Mi
// logits (256 MiB in fp32) or 256 rows, whichever is more (the dW product's
// depth: shallower ones fall off the BLAS's rate), never more than N, and
// the chunks as equal as whole rows allow. Each chunk's three products
// repack the [V, C] head weights: with GPT-2's V, chunks of 256 rows ran the
// head's GEMMs 6-8 % under their rate on all rows (docs/performance.md).
int64_t lm_head_chunk_rows(int64_t N, int64_t V);

template <class T>
void lm_head_loss(Vec<T> dx, Vec<T> dW, Vec<T> losses, Vec<T> scratch, CVec<T> x, CVec<T> W,
                  CVec<int32_t> targets, CVec<T> weights, int N, int C, int V, int rows,
                  Precision prec = Precision::FP32);

// The unchunked composition (matmul_forward, softmax_crossentropy_forward and
// _backward over all N rows, then matmul_backward into zeroed dx and dW).
template <class T>
void lm_head_loss_reference(Vec<T> dx, Vec<T> dW, Vec<T> losses, CVec<T> x, CVec<T> W, CVec<int32_t> targets,
                            CVec<T> weights, int N, int C, int V, Precision prec = Precision::FP32);

}  // namespace zeropp
