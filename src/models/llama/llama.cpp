#include "src/models/llama/llama.hpp"

#include <cmath>

#include "kernels/ops/attention.hpp"
#include "kernels/ops/encoder.hpp"
#include "kernels/ops/matmul.hpp"
#include "kernels/ops/residual.hpp"
#include "kernels/ops/rmsnorm.hpp"
#include "kernels/ops/rope.hpp"
#include "kernels/ops/swiglu.hpp"
#include "src/models/decoder_parts.hpp"

namespace zeropp {

namespace {

using namespace decoder;

using namespace llama;  // BlockParam

}  // namespace

// Activations kept for the backward pass, and backward scratch, sized for
// Bmax×Tmax; a pass over B×Tn tokens uses the leading part of each buffer.
template <class T>
struct Llama<T>::Acts {
  Buffer<T> encoded;  // [B,T,C] residual stream into layers.0
  std::vector<Buffer<T>> xn1, rstd1, qkv, qkvr, atty, att, res2, xn2, rstd2, h, g, res3;  // per layer
  Buffer<T> preatt, scratchC, xnf, rstdf;
  // backward scratch: dres the residual stream's gradient, dC each block's
  // [B,T,C] gradients in turn (dxn2, datty, dxn1), dxnf the final norm's
  // output gradient (written by the forward's LM head)
  Buffer<T> dres, dC, dxnf, dqkv, dqkvr, dh, dg, dpreatt, datt;

  std::vector<const Buffer<T>*> all() const {
    std::vector<const Buffer<T>*> v;
    for (const auto* layer : {&xn1, &rstd1, &qkv, &qkvr, &atty, &att, &res2, &xn2, &rstd2, &h, &g, &res3})
      for (const Buffer<T>& b : *layer) v.push_back(&b);
    for (const Buffer<T>* b : {&encoded, &preatt, &scratchC, &xnf, &rstdf, &dres, &dC, &dxnf, &dqkv, &dqkvr,
                               &dh, &dg, &dpreatt, &datt})
      v.push_back(b);
    return v;
  }
};

template <class T>
Llama<T>::Llama(const ModelConfig& cfg, int B, int Tmax)
    : Decoder<T>(cfg, llama_description(cfg), B, Tmax),
      F_(llama::ffn_hidden(cfg)),
      a_(std::make_unique<Acts>()) {
  const ActivationPlan plan = llama_activation_plan(cfg, B, Tmax);
  auto one = [&](const char* name) { return allocate_one<T>(plan, name); };
  auto copies = [&](const char* name) { return allocate_copies<T>(plan, name); };
  auto& a = *a_;
  a.encoded = one("encoded");
  a.res3 = copies("res3");
  // Per recomputation slot (src/models/llama/llama_layout.cpp).
  for (auto [v, name] : {std::pair{&a.xn1, "xn1"},
                         {&a.rstd1, "rstd1"},
                         {&a.qkv, "qkv"},
                         {&a.qkvr, "qkv_rope"},
                         {&a.atty, "atty"},
                         {&a.att, "att"},
                         {&a.res2, "res2"},
                         {&a.xn2, "xn2"},
                         {&a.rstd2, "rstd2"},
                         {&a.h, "h"},
                         {&a.g, "g"}})
    *v = copies(name);
  for (auto [b, name] : {std::pair{&a.preatt, "preatt"},
                         {&a.scratchC, "scratchC"},
                         {&a.xnf, "xnf"},
                         {&a.rstdf, "rstdf"},
                         {&a.dres, "dres"},
                         {&a.dC, "dC"},
                         {&a.dxnf, "dxnf"},
                         {&a.dqkv, "dqkv"},
                         {&a.dqkvr, "dqkv_rope"},
                         {&a.dh, "dh"},
                         {&a.dg, "dg"},
                         {&a.dpreatt, "dpreatt"},
                         {&a.datt, "datt"}})
    *b = one(name);
}

template <class T>
Llama<T>::~Llama() = default;

template <class T>
int64_t Llama<T>::activation_bytes() const {
  int64_t n = 0;
  for (const Buffer<T>* b : a_->all()) n += b->bytes();
  return n + this->own_bytes();
}

template <class T>
std::vector<int> Llama<T>::unit_schedule(Pass pass) const {
  std::vector<int> s;
  const int last = llama::head_unit(cfg_);
  if (pass == Pass::Forward)
    for (int u = 0; u <= last; ++u) s.push_back(u);
  else  // the head's backward ran in the forward; the embeddings' needs no weights
    for (int u = llama::final_norm_unit(cfg_); u >= 1; --u) s.push_back(u);
  return s;
}

template <class T>
void Llama<T>::block_forward(int l, CVec<T> w, bool recomputing) {
  const int B = B_, Tn = Tn_, C = cfg_.n_embd, NH = cfg_.n_head, F = F_;
  const int64_t BT = int64_t(B) * Tn, nC = BT * C, nF = BT * F;
  const int64_t natt = int64_t(B) * NH * Tn * Tn;
  auto& a = *a_;
  const int k = decoder::activation_slot(cfg_, l);
  const auto& ps = layout_.units[size_t(llama::block_unit(l))].params;
  const CVec<T> x = l == 0 ? CVec<T>(a.encoded.data(), nC) : CVec<T>(a.res3[l - 1].data(), nC);
  rmsnorm_forward<T>(at(a.xn1[k], 0, nC), at(a.rstd1[k], 0, BT), x, P(w, ps[ATTN_NORM]), int(BT), C);
  matmul_forward<T>(at(a.qkv[k], 0, 3 * nC), at(a.xn1[k], 0, nC), P(w, ps[WQKV]), CVec<T>(), int(BT), C,
                    3 * C, Trans::N, this->prec_);
  rope_forward<T>(at(a.qkvr[k], 0, 3 * nC), at(a.qkv[k], 0, 3 * nC), B, Tn, C, NH);
  attention_forward<T>(at(a.atty[k], 0, nC), at(a.preatt, 0, natt), at(a.att[k], 0, natt),
                       at(a.qkvr[k], 0, 3 * nC), B, Tn, C, NH);
  matmul_forward<T>(at(a.scratchC, 0, nC), at(a.atty[k], 0, nC), P(w, ps[WO]), CVec<T>(), int(BT), C, C,
                    Trans::N, this->prec_);
  residual_forward<T>(at(a.res2[k], 0, nC), x, at(a.scratchC, 0, nC), nC);
  rmsnorm_forward<T>(at(a.xn2[k], 0, nC), at(a.rstd2[k], 0, BT), at(a.res2[k], 0, nC), P(w, ps[FFN_NORM]),
                     int(BT), C);
  matmul_forward<T>(at(a.h[k], 0, 2 * nF), at(a.xn2[k], 0, nC), P(w, ps[W13]), CVec<T>(), int(BT), C, 2 * F,
                    Trans::N, this->prec_);
  swiglu_forward<T>(at(a.g[k], 0, nF), at(a.h[k], 0, 2 * nF), BT, F);
  // The block's output (the next block's kept input) is not needed again
  // by its own backward.
  if (recomputing) return;
  matmul_forward<T>(at(a.scratchC, 0, nC), at(a.g[k], 0, nF), P(w, ps[W2]), CVec<T>(), int(BT), F, C,
                    Trans::N, this->prec_);
  residual_forward<T>(at(a.res3[l], 0, nC), at(a.res2[k], 0, nC), at(a.scratchC, 0, nC), nC);
}

template <class T>
double Llama<T>::forward(CVec<int32_t> tokens, CVec<int32_t> targets, int B, int Tn, UnitSource<T>& src) {
  const int C = cfg_.n_embd, L = cfg_.n_layer;
  const int64_t BT = int64_t(B) * Tn, nC = BT * C;
  auto& a = *a_;
  const bool with_targets = this->begin_forward(tokens, targets, B, Tn);
  const CVec<int32_t> tok(this->tokens_.data(), BT);
  {
    const int u = llama::kEmbeddings;
    CVec<T> w = src.acquire(u);
    encoder_forward<T>(at(a.encoded, 0, nC), tok, P(w, layout_.units[u].params[0]), CVec<T>(), B, Tn, C);
    src.release(u);
  }
  for (int l = 0; l < L; ++l) {
    const int u = llama::block_unit(l);
    block_forward(l, src.acquire(u), false);
    src.release(u);
  }
  {
    const int u = llama::final_norm_unit(cfg_);
    CVec<T> w = src.acquire(u);
    rmsnorm_forward<T>(at(a.xnf, 0, nC), at(a.rstdf, 0, BT), at(a.res3[L - 1], 0, nC),
                       P(w, layout_.units[size_t(u)].params[0]), int(BT), C);
    src.release(u);
  }
  return this->head_and_loss(src, llama::head_unit(cfg_), at(a.xnf, 0, nC), at(a.dxnf, 0, nC), with_targets);
}

template <class T>
void Llama<T>::backward(T dloss, UnitSource<T>& src) {
  const int B = B_, Tn = Tn_;
  const int C = cfg_.n_embd, NH = cfg_.n_head, L = cfg_.n_layer, F = F_;
  const int64_t BT = int64_t(B) * Tn, nC = BT * C, nF = BT * F;
  const int64_t natt = int64_t(B) * NH * Tn * Tn;
  auto& a = *a_;
  const CVec<int32_t> tok(this->tokens_.data(), BT);

  // head: its backward ran in the forward; its gradient is complete here.
  const Vec<T> dxnf = at(a.dxnf, 0, nC);
  {
    const int u = llama::head_unit(cfg_);
    this->head_backward(src, u, dloss, dxnf);
    src.grad_done(u);
  }
  // The residual stream's gradient stays in dres (as in GPT<T>::backward):
  // each block reads it as its projections' output gradient and its two
  // norms' backwards add into it.
  const Vec<T> dres = at(a.dres, 0, nC);
  zero(dres);
  {
    const int u = llama::final_norm_unit(cfg_);
    const auto [w, g, ps] = acquire_for_backward(src, layout_, u);
    const auto& p = ps[0];
    rmsnorm_backward<T>(dres, G(g, p), dxnf, at(a.res3[L - 1], 0, nC), P(w, p), at(a.rstdf, 0, BT), int(BT),
                        C);
    finish_backward(src, u);
  }
  const Vec<T> dC = at(a.dC, 0, nC);
  const Vec<T> dqkv = at(a.dqkv, 0, 3 * nC), dqkvr = at(a.dqkvr, 0, 3 * nC);
  const Vec<T> dh = at(a.dh, 0, 2 * nF), dg = at(a.dg, 0, nF);
  constexpr GradMode first = GradMode::Overwrite;
  const bool recompute = activation_slots(cfg_) < L;
  for (int l = L - 1; l >= 0; --l) {
    const int u = llama::block_unit(l);
    const auto [w, g, ps] = acquire_for_backward(src, layout_, u);
    // Recomputation refills slot 0 inside this unit's backward window (as in
    // GPT<T>::backward); the last block's activations are still there.
    if (recompute && l < L - 1) block_forward(l, w, true);
    const int k = activation_slot(cfg_, l);
    const CVec<T> x = l == 0 ? CVec<T>(a.encoded.data(), nC) : CVec<T>(a.res3[l - 1].data(), nC);
    matmul_backward<T>(dg, G(g, ps[W2]), Vec<T>(), dres, at(a.g[k], 0, nF), P(w, ps[W2]), int(BT), F, C,
                       Trans::N, this->prec_, first);
    swiglu_backward<T>(dh, at(a.h[k], 0, 2 * nF), dg, BT, F, first);
    matmul_backward<T>(dC, G(g, ps[W13]), Vec<T>(), dh, at(a.xn2[k], 0, nC), P(w, ps[W13]), int(BT), C, 2 * F,
                       Trans::N, this->prec_, first);  // dxn2
    rmsnorm_backward<T>(dres, G(g, ps[FFN_NORM]), dC, at(a.res2[k], 0, nC), P(w, ps[FFN_NORM]),
                        at(a.rstd2[k], 0, BT), int(BT), C);
    matmul_backward<T>(dC, G(g, ps[WO]), Vec<T>(), dres, at(a.atty[k], 0, nC), P(w, ps[WO]), int(BT), C, C,
                       Trans::N, this->prec_, first);  // datty
    attention_backward<T>(dqkvr, at(a.dpreatt, 0, natt), at(a.datt, 0, natt), dC, at(a.qkvr[k], 0, 3 * nC),
                          at(a.att[k], 0, natt), B, Tn, C, NH, first);
    rope_backward<T>(dqkv, dqkvr, B, Tn, C, NH, first);
    matmul_backward<T>(dC, G(g, ps[WQKV]), Vec<T>(), dqkv, at(a.xn1[k], 0, nC), P(w, ps[WQKV]), int(BT), C,
                       3 * C, Trans::N, this->prec_, first);  // dxn1
    rmsnorm_backward<T>(dres, G(g, ps[ATTN_NORM]), dC, x, P(w, ps[ATTN_NORM]), at(a.rstd1[k], 0, BT), int(BT),
                        C);
    finish_backward(src, u);
  }
  {
    const int u = llama::kEmbeddings;
    const Vec<T> g = src.grad(u);
    encoder_backward<T>(G(g, layout_.units[size_t(u)].params[0]), Vec<T>(), dres, tok, B, Tn, C);
    src.grad_done(u);
  }
}

template class Llama<float>;
template class Llama<double>;

}  // namespace zeropp
