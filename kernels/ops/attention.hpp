// Causal multi-head self-attention core (the q/k/v and output projections are
// separate matmuls).
//
// Shapes (row-major): qkv [B,Tn,3C] holds q = qkv[...,0:C], k = [C:2C],
// v = [2C:3C]; head h of NH uses channels h*hs..(h+1)*hs with hs = C/NH.
// preatt, att, dpreatt, datt are [B,NH,Tn,Tn]; out and dout are [B,Tn,C].
//
// Forward, per batch element b and head h:
//   preatt = (q_h · k_h^T) / sqrt(hs)                  (Tn x Tn scratch)
//   att[t,:] = softmax over t2 <= t of preatt[t,t2]; att[t,t2] = 0 for t2 > t
//                                                      (causal_softmax.hpp)
//   out[:, h*hs:(h+1)*hs] = att · v_h
// out and att are overwritten (att is saved for the backward pass), preatt at
// least on and below the diagonal (t2 <= t): its masked entries are left
// unspecified, since nothing reads them. Each product is a GEMM batched over
// heads (head stride hs, leading dimension 3C; kernel: gemm_batched.hpp), one
// call per b and block of query rows, computing only the blocks on or left of
// the diagonal (attention.cpp).
//
// Backward, with scale = 1/sqrt(hs):
//   datt    = dout_h · v_h^T                           (scratch; t2 > t unspecified)
//   dv_h   += att^T · dout_h
//   dpreatt = scale * att ⊙ (datt - rowsum(att ⊙ datt)) (scratch, overwritten, 0 for t2 > t)
//   dq_h   += dpreatt · k_h,   dk_h += dpreatt^T · q_h
// dqkv is accumulated (+=), or overwritten with dqkv_mode Overwrite (each of
// its elements is the output of exactly one GEMM, which then runs with
// beta = 0: the same bits as accumulating into zeros, garbage in dqkv unread).
#pragma once

#include "kernels/runtime/common.hpp"
#include "kernels/runtime/grad_mode.hpp"

namespace zeropp {

template <class T>
void attention_forward(Vec<T> out, Vec<T> preatt, Vec<T> att, CVec<T> qkv, int B, int Tn, int C, int NH);

template <class T>
void attention_backward(Vec<T> dqkv, Vec<T> dpreatt, Vec<T> datt, CVec<T> dout, CVec<T> qkv, CVec<T> att,
                        int B, int Tn, int C, int NH, GradMode dqkv_mode = GradMode::Accumulate);

template <class T>
void attention_forward_reference(Vec<T> out, Vec<T> preatt, Vec<T> att, CVec<T> qkv, int B, int Tn, int C,
                                 int NH);

template <class T>
void attention_backward_reference(Vec<T> dqkv, Vec<T> dpreatt, Vec<T> datt, CVec<T> dout, CVec<T> qkv,
                                  CVec<T> att, int B, int Tn, int C, int NH,
                                  GradMode dqkv_mode = GradMode::Accumulate);

}  // namespace zeropp
