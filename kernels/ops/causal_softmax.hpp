// Attention's causal mask + softmax, fused: one pass per row of the score
// matrices instead of a masking pass and a softmax pass over [B,NH,Tn,Tn].
//
// Shapes (row-major): pre, att, datt, dpre [rows, Tn], rows = B·NH·Tn; row r
// belongs to query position t = r % Tn and sees keys t2 <= t.
// Forward (overwrites att):
//   att[r, t2] = exp(pre[r, t2] - m) / sum_{t2' <= t} exp(pre[r, t2'] - m)  for t2 <= t
//   att[r, t2] = 0                                   for t < t2 < causal_row_end(t, Tn)
//   att[r, t2] unspecified (not written)             for t2 >= causal_row_end(t, Tn)
// with m the row's max over t2 <= t; only the t+1 visible scores are read
// (the masked ones need not be finite). The scores' 1/sqrt(hs) is applied by
// the GEMM that writes pre (its alpha), which costs nothing there.
// Backward (overwrites dpre), the gradient with respect to the scores before
// that scale:
//   dpre[r, t2] = scale · att (datt - sum_{t2' <= t} att datt)  for t2 <= t, 0 above
// up to causal_row_end, unspecified from there (datt is read only for t2 <= t).
// attention.cpp's products read only the columns before causal_row_end, so the
// zeros beyond it were writes no one read. The CUDA twin (causal_softmax.cu)
// writes zeros in every masked entry: its products read whole rows.
// The _reference twins are the unfused composition: mask the scores with
// -inf, then an ordinary softmax with std::exp; the backward masks after a
// dense softmax gradient.
#pragma once

#include "kernels/ops/softmax_row.hpp"
#include "kernels/runtime/common.hpp"

namespace zeropp {

// Query rows per block of attention's products (attention.cpp): the block of
// rows [r0, r0 + kCausalRowBlock) reads only the scores' first
// r0 + kCausalRowBlock columns.
constexpr int kCausalRowBlock = 64;

// One past the last column of query row t that those products read: the end
// of t's row block.
KOKKOS_FORCEINLINE_FUNCTION int causal_row_end(int t, int Tn) {
  const int end = (t / kCausalRowBlock + 1) * kCausalRowBlock;
  return end < Tn ? end : Tn;
}

// One row of it, shared with attention_decode.cpp (whose rows see keys up to
// pos + t): out[t2] = softmax over t2 <= last of in[t2], 0 for last < t2 < n.
// out may be in.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void causal_softmax_row(T* out, const T* in, int last, int n) {
  softmax_row(in, out, last + 1, T(1));
  for (int t2 = last + 1; t2 < n; ++t2) out[t2] = T(0);
}

template <class T>
void causal_softmax_forward(Vec<T> att, CVec<T> pre, int64_t rows, int Tn);

template <class T>
void causal_softmax_backward(Vec<T> dpre, CVec<T> att, CVec<T> datt, int64_t rows, int Tn, T scale);

template <class T>
void causal_softmax_forward_reference(Vec<T> att, CVec<T> pre, int64_t rows, int Tn);

template <class T>
void causal_softmax_backward_reference(Vec<T> dpre, CVec<T> att, CVec<T> datt, int64_t rows, int Tn, T scale);

}  // namespace zeropp
