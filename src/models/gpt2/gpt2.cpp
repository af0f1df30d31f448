#include "src/models/gpt2/gpt2.hpp"

#include <cmath>

#include "kernels/ops/attention.hpp"
#include "kernels/ops/bias_gelu.hpp"
#include "kernels/ops/encoder.hpp"
#include "kernels/ops/gelu.hpp"
#include "kernels/ops/layernorm.hpp"
#include "kernels/ops/layernorm_seed.hpp"
#include "kernels/ops/matmul.hpp"
#include "src/models/decoder_parts.hpp"

namespace zeropp {

namespace {

using namespace decoder;

using namespace gpt2;  // BlockParam

}  // namespace

// Activations kept for the backward pass, and backward scratch, sized for
// Bmax×Tmax; a pass over B×Tn tokens uses the leading part of each buffer.
template <class T>
struct GPT<T>::Acts {
  Buffer<T> encoded;                                    // [B,T,C] residual stream into h.0
  std::vector<Buffer<T>> ln1, ln1_mean, ln1_rstd, qkv;  // per layer
  std::vector<Buffer<T>> atty, att, res2, ln2, ln2_mean, ln2_rstd, fch, fch_gelu, res3;
  Buffer<T> preatt;  // forward scratch
  Buffer<T> lnf, lnf_mean, lnf_rstd;
  // backward scratch: dres the residual stream's gradient, dC each block's
  // [B,T,C] gradients in turn (dln2, datty, dln1), dlnf ln_f's output gradient
  // (written by the forward's LM head)
  Buffer<T> dres, dC, dlnf, dqkv, dfch, dgelu, dpreatt, datt;
};

template <class T>
GPT<T>::GPT(const ModelConfig& cfg, int B, int Tmax)
    : Decoder<T>(cfg, gpt2_description(cfg), B, Tmax), a_(std::make_unique<Acts>()) {
  const ActivationPlan plan = gpt2_activation_plan(cfg, B, Tmax);
  auto one = [&](const char* name) { return allocate_one<T>(plan, name); };
  auto copies = [&](const char* name) { return allocate_copies<T>(plan, name); };
  auto& a = *a_;
  a.encoded = one("encoded");
  a.res3 = copies("res3");
  // Per recomputation slot (src/models/gpt2/gpt2_layout.cpp).
  for (auto [v, name] : {std::pair{&a.ln1, "ln1"},
                         {&a.ln1_mean, "ln1_mean"},
                         {&a.ln1_rstd, "ln1_rstd"},
                         {&a.qkv, "qkv"},
                         {&a.atty, "atty"},
                         {&a.att, "att"},
                         {&a.res2, "res2"},
                         {&a.ln2, "ln2"},
                         {&a.ln2_mean, "ln2_mean"},
                         {&a.ln2_rstd, "ln2_rstd"},
                         {&a.fch, "fch"},
                         {&a.fch_gelu, "fch_gelu"}})
    *v = copies(name);
  for (auto [b, name] : {std::pair{&a.preatt, "preatt"},
                         {&a.lnf, "lnf"},
                         {&a.lnf_mean, "lnf_mean"},
                         {&a.lnf_rstd, "lnf_rstd"},
                         {&a.dres, "dres"},
                         {&a.dC, "dC"},
                         {&a.dlnf, "dlnf"},
                         {&a.dqkv, "dqkv"},
                         {&a.dfch, "dfch"},
                         {&a.dgelu, "dgelu"},
                         {&a.dpreatt, "dpreatt"},
                         {&a.datt, "datt"}})
    *b = one(name);
}

template <class T>
GPT<T>::~GPT() = default;

template <class T>
int64_t GPT<T>::activation_bytes() const {
  const auto& a = *a_;
  int64_t n = 0;
  for (const auto* layer : {&a.ln1, &a.ln1_mean, &a.ln1_rstd, &a.qkv, &a.atty, &a.att, &a.res2, &a.ln2,
                            &a.ln2_mean, &a.ln2_rstd, &a.fch, &a.fch_gelu, &a.res3})
    for (const Buffer<T>& b : *layer) n += b.bytes();
  for (const Buffer<T>* b : {&a.encoded, &a.preatt, &a.lnf, &a.lnf_mean, &a.lnf_rstd, &a.dres, &a.dC, &a.dlnf,
                             &a.dqkv, &a.dfch, &a.dgelu, &a.dpreatt, &a.datt})
    n += b->bytes();
  return n + this->own_bytes();
}

template <class T>
std::vector<int> GPT<T>::unit_schedule(Pass pass) const {
  const int L = cfg_.n_layer;
  std::vector<int> s;
  if (pass == Pass::Forward) {
    for (int u = 0; u <= L + 1; ++u) s.push_back(u);
    s.push_back(gpt2::kEmbeddings);  // tied LM head
  } else {
    // The LM head's backward ran in the forward; the encoder's needs no weights.
    for (int u = L + 1; u >= 1; --u) s.push_back(u);
  }
  return s;
}

template <class T>
void GPT<T>::block_forward(int l, CVec<T> w, Vec<T> out, bool recomputing) {
  const int B = B_, Tn = Tn_, C = cfg_.n_embd, NH = cfg_.n_head;
  const int64_t BT = int64_t(B) * Tn, nC = BT * C;
  const int64_t natt = int64_t(B) * NH * Tn * Tn;
  auto& a = *a_;
  const int k = decoder::activation_slot(cfg_, l);
  const auto& ps = layout_.units[size_t(gpt2::block_unit(l))].params;
  const CVec<T> x = l == 0 ? CVec<T>(a.encoded.data(), nC) : CVec<T>(a.res3[l - 1].data(), nC);
  // Each LayerNorm also writes its input plus the next projection's bias
  // into the residual buffer that projection's GEMM then accumulates onto
  // (beta = 1): res2 = (x + b_attn_proj) + atty·W, res3 likewise
  // (kernels/ops/layernorm_seed.hpp); no residual pass of its own.
  layernorm_seed_forward<T>(at(a.ln1[k], 0, nC), at(a.ln1_mean[k], 0, BT), at(a.ln1_rstd[k], 0, BT),
                            at(a.res2[k], 0, nC), x, P(w, ps[LN1W]), P(w, ps[LN1B]), P(w, ps[APROJB]),
                            int(BT), C);
  matmul_forward<T>(at(a.qkv[k], 0, 3 * nC), at(a.ln1[k], 0, nC), P(w, ps[ATTNW]), P(w, ps[ATTNB]), int(BT),
                    C, 3 * C, Trans::N, this->prec_);
  attention_forward<T>(at(a.atty[k], 0, nC), at(a.preatt, 0, natt), at(a.att[k], 0, natt),
                       at(a.qkv[k], 0, 3 * nC), B, Tn, C, NH);
  matmul_forward_accumulate<T>(at(a.res2[k], 0, nC), at(a.atty[k], 0, nC), P(w, ps[APROJW]), int(BT), C, C,
                               Trans::N, this->prec_);
  layernorm_seed_forward<T>(at(a.ln2[k], 0, nC), at(a.ln2_mean[k], 0, BT), at(a.ln2_rstd[k], 0, BT), out,
                            at(a.res2[k], 0, nC), P(w, ps[LN2W]), P(w, ps[LN2B]), P(w, ps[MPROJB]), int(BT),
                            C);
  // fc's bias rows are the GEMM's C (beta = 1): they replace OpenBLAS's own
  // clearing pass, and GELU reads fch without writing it back.
  matmul_forward<T>(at(a.fch[k], 0, 4 * nC), at(a.ln2[k], 0, nC), P(w, ps[FCW]), P(w, ps[FCB]), int(BT), C,
                    4 * C, Trans::N, this->prec_);
  gelu_forward<T>(at(a.fch_gelu[k], 0, 4 * nC), at(a.fch[k], 0, 4 * nC), 4 * nC);
  // The block's output (the next block's kept input) is not needed again
  // by its own backward.
  if (recomputing) return;
  matmul_forward_accumulate<T>(out, at(a.fch_gelu[k], 0, 4 * nC), P(w, ps[MPROJW]), int(BT), 4 * C, C,
                               Trans::N, this->prec_);
}

template <class T>
double GPT<T>::forward(CVec<int32_t> tokens, CVec<int32_t> targets, int B, int Tn, UnitSource<T>& src) {
  const int C = cfg_.n_embd, L = cfg_.n_layer;
  const int64_t BT = int64_t(B) * Tn, nC = BT * C;
  auto& a = *a_;
  const bool with_targets = this->begin_forward(tokens, targets, B, Tn);

  const CVec<int32_t> tok(this->tokens_.data(), BT);

  // embeddings
  const int emb = gpt2::kEmbeddings;
  {
    CVec<T> w = src.acquire(emb);
    const auto& ps = layout_.units[emb].params;
    encoder_forward<T>(at(a.encoded, 0, nC), tok, P(w, ps[0]), P(w, ps[1]), B, Tn, C);
    src.release(emb);
  }
  // transformer blocks
  for (int l = 0; l < L; ++l) {
    const int u = gpt2::block_unit(l);
    block_forward(l, src.acquire(u), at(a.res3[l], 0, nC), false);
    src.release(u);
  }
  // final LayerNorm
  {
    const int u = gpt2::final_norm_unit(cfg_);
    CVec<T> w = src.acquire(u);
    const auto& ps = layout_.units[u].params;
    layernorm_forward<T>(at(a.lnf, 0, nC), at(a.lnf_mean, 0, BT), at(a.lnf_rstd, 0, BT),
                         at(a.res3[L - 1], 0, nC), P(w, ps[0]), P(w, ps[1]), int(BT), C);
    src.release(u);
  }
  // tied LM head and loss (and the head's backward, into dlnf)
  return this->head_and_loss(src, emb, at(a.lnf, 0, nC), at(a.dlnf, 0, nC), with_targets);
}

template <class T>
void GPT<T>::backward(T dloss, UnitSource<T>& src) {
  const int B = B_, Tn = Tn_;
  const int C = cfg_.n_embd, NH = cfg_.n_head, L = cfg_.n_layer;
  const int64_t BT = int64_t(B) * Tn, nC = BT * C;
  const int64_t natt = int64_t(B) * NH * Tn * Tn;
  auto& a = *a_;
  const CVec<int32_t> tok(this->tokens_.data(), BT);

  // LM head (its backward ran in the forward): wte's first contribution.
  const int emb = gpt2::kEmbeddings;
  const Vec<T> dlnf = at(a.dlnf, 0, nC);
  this->head_backward(src, emb, dloss, dlnf);
  // final LayerNorm: dres becomes the gradient of h.{L-1}'s output. From
  // there on the residual stream's gradient stays in dres: a residual's
  // backward passes it to both branches unchanged, so each block reads it as
  // its projections' output gradient and its two LayerNorm backwards add
  // their input gradients into it (the only accumulation; every other buffer
  // is overwritten by its single writer, GradMode::Overwrite).
  const Vec<T> dres = at(a.dres, 0, nC);
  zero(dres);
  {
    const int u = gpt2::final_norm_unit(cfg_);
    const auto [w, g, ps] = acquire_for_backward(src, layout_, u);
    layernorm_backward<T>(dres, G(g, ps[0]), G(g, ps[1]), dlnf, at(a.res3[L - 1], 0, nC), P(w, ps[0]),
                          at(a.lnf_mean, 0, BT), at(a.lnf_rstd, 0, BT), int(BT), C);
    finish_backward(src, u);
  }
  // blocks in reverse
  const Vec<T> dC = at(a.dC, 0, nC);
  const Vec<T> dqkv = at(a.dqkv, 0, 3 * nC), dfch = at(a.dfch, 0, 4 * nC), dgelu = at(a.dgelu, 0, 4 * nC);
  constexpr GradMode first = GradMode::Overwrite;
  const bool recompute = activation_slots(cfg_) < L;
  for (int l = L - 1; l >= 0; --l) {
    const int u = gpt2::block_unit(l);
    const auto [w, g, ps] = acquire_for_backward(src, layout_, u);
    // Recomputation refills slot 0 inside this unit's backward window: the
    // weights are the ones the backward holds, and nothing more is gathered.
    // dC is free until the first GEMM below overwrites it. The last block's
    // activations are still in slot 0 from the forward.
    if (recompute && l < L - 1) block_forward(l, w, dC, true);
    const int k = activation_slot(cfg_, l);
    const CVec<T> x = l == 0 ? CVec<T>(a.encoded.data(), nC) : CVec<T>(a.res3[l - 1].data(), nC);
    matmul_backward<T>(dgelu, G(g, ps[MPROJW]), G(g, ps[MPROJB]), dres, at(a.fch_gelu[k], 0, 4 * nC),
                       P(w, ps[MPROJW]), int(BT), 4 * C, C, Trans::N, this->prec_, first);
    bias_gelu_backward<T>(dfch, G(g, ps[FCB]), at(a.fch[k], 0, 4 * nC), dgelu, int(BT), 4 * C, first);
    matmul_backward<T>(dC, G(g, ps[FCW]), Vec<T>(), dfch, at(a.ln2[k], 0, nC), P(w, ps[FCW]), int(BT), C,
                       4 * C, Trans::N, this->prec_, first);  // dln2
    layernorm_backward<T>(dres, G(g, ps[LN2W]), G(g, ps[LN2B]), dC, at(a.res2[k], 0, nC), P(w, ps[LN2W]),
                          at(a.ln2_mean[k], 0, BT), at(a.ln2_rstd[k], 0, BT), int(BT), C);
    matmul_backward<T>(dC, G(g, ps[APROJW]), G(g, ps[APROJB]), dres, at(a.atty[k], 0, nC), P(w, ps[APROJW]),
                       int(BT), C, C, Trans::N, this->prec_, first);  // datty
    attention_backward<T>(dqkv, at(a.dpreatt, 0, natt), at(a.datt, 0, natt), dC, at(a.qkv[k], 0, 3 * nC),
                          at(a.att[k], 0, natt), B, Tn, C, NH, first);
    matmul_backward<T>(dC, G(g, ps[ATTNW]), G(g, ps[ATTNB]), dqkv, at(a.ln1[k], 0, nC), P(w, ps[ATTNW]),
                       int(BT), C, 3 * C, Trans::N, this->prec_, first);  // dln1
    layernorm_backward<T>(dres, G(g, ps[LN1W]), G(g, ps[LN1B]), dC, x, P(w, ps[LN1W]),
                          at(a.ln1_mean[k], 0, BT), at(a.ln1_rstd[k], 0, BT), int(BT), C);
    finish_backward(src, u);
  }
  // embeddings: wte gets its second contribution, then the unit is complete.
  {
    const Vec<T> g = src.grad(emb);
    const auto& ps = layout_.units[emb].params;
    encoder_backward<T>(G(g, ps[0]), G(g, ps[1]), dres, tok, B, Tn, C);
    src.grad_done(emb);
  }
}

template class GPT<float>;
template class GPT<double>;

}  // namespace zeropp
