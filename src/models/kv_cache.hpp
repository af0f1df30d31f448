// What a decoder keeps while it generates: the keys and values of every
// layer for the tokens decoded so far (the KV cache), and the scratch one
// decode step needs. Allocated by decode_reset for its B sequences of up to
// Tmax tokens, so training never pays for it.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/runtime/common.hpp"
#include "kernels/runtime/device_buffer.hpp"

namespace zeropp {

template <class T>
struct KVCache {
  int Tmax = 0, C = 0;
  // Per layer [B, Tmax, C] (B of the largest decode_reset): sequence b's position t at (b*Tmax + t)*C.
  std::vector<Buffer<T>> k, v;

  KVCache(int L, int Bmax, int Tmax, int C);
  // Copies the keys and values of qkv [B,Tn,3C] (k = [C:2C], v = [2C:3C]) to
  // positions pos..pos+Tn-1 of layer l.
  void append(int l, CVec<T> qkv, int B, int Tn, int pos);
  int64_t bytes() const;
};

// Scratch of one decode step over B×Tn tokens (Tn up to Tmax for a prefill).
// H1 and H2 are the family's MLP widths (GPT-2: 4C and 4C; LLaMA: 2F and F).
template <class T>
struct DecodeScratch {
  Buffer<T> x, x2, norm, mean, rstd, qkv, qkv2, atty, proj, hid1, hid2, att;  // [Bmax·Tmax, ...]
  Buffer<T> last, last_norm, last_mean, last_rstd, logits;                    // [Bmax, C] / [Bmax, V]

  DecodeScratch(int Bmax, int Tmax, int C, int NH, int H1, int H2, int V);
  int64_t bytes() const;
};

// Elements the two structures above allocate, without allocating them (the
// memory preflight of generation; tests hold them equal to bytes()).
int64_t kv_cache_elems(int L, int Bmax, int Tmax, int C);
int64_t decode_scratch_elems(int Bmax, int Tmax, int C, int NH, int H1, int H2, int V);

// Rows Tn-1, 2Tn-1, ... of x [B,Tn,C] (each sequence's last position) into out [B,C].
template <class T>
void take_last_rows(Vec<T> out, CVec<T> x, int B, int Tn, int C) {
  const int64_t row = int64_t(Tn) * C;
  copy_rows(out, C, CVec<T>(x.data() + row - C, int64_t(x.size()) - (row - C)), row, B, C);
}

}  // namespace zeropp
