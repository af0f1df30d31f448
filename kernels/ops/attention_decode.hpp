// Causal attention of new queries against a key/value cache (generation).
//
// Tn new tokens of each of B sequences sit at positions pos..pos+Tn-1; their
// keys and values are already in the caches, which hold positions 0..pos+Tn-1
// of every sequence. Shapes (row-major): qkv [B,Tn,3C] (only q = qkv[...,0:C]
// is read); kcache, vcache [B,Tmax,C]; att [B,NH,Tn,Tk] with Tk = pos+Tn
// (scratch, overwritten); out [B,Tn,C] (overwritten). Head h uses channels
// h*hs..(h+1)*hs, hs = C/NH. Per b, h and new token t:
//   att[t,t2] = softmax over t2 <= pos+t of q_t · k_t2 / sqrt(hs); 0 for t2 > pos+t
//   out[t, h*hs:(h+1)*hs] = sum_t2 att[t,t2] v_t2
// With pos = 0 and Tn = T this is attention_forward's output over the same
// q, k, v (the cache holding k and v of the T tokens).
#pragma once

#include "kernels/runtime/common.hpp"

namespace zeropp {

template <class T>
void attention_decode(Vec<T> out, Vec<T> att, CVec<T> qkv, CVec<T> kcache, CVec<T> vcache, int B, int Tn,
                      int pos, int Tmax, int C, int NH);

template <class T>
void attention_decode_reference(Vec<T> out, Vec<T> att, CVec<T> qkv, CVec<T> kcache, CVec<T> vcache, int B,
                                int Tn, int pos, int Tmax, int C, int NH);

}  // namespace zeropp
