#include "src/models/gpt2/gpt2.hpp"

#include <cmath>

#include "kernels/attention.hpp"
#include "kernels/bias_gelu.hpp"
#include "kernels/crossentropy.hpp"
#include "kernels/encoder.hpp"
#include "kernels/layernorm.hpp"
#include "kernels/matmul.hpp"
#include "kernels/residual.hpp"
#include "kernels/residual_layernorm.hpp"
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
  Buf<T> encoded;                                    // [B,T,C] residual stream into h.0
  std::vector<Buf<T>> ln1, ln1_mean, ln1_rstd, qkv;  // per layer
  std::vector<Buf<T>> atty, att, res2, ln2, ln2_mean, ln2_rstd, fch, fch_gelu, res3;
  Buf<T> preatt, scratchC;  // forward scratch
  Buf<T> lnf, lnf_mean, lnf_rstd;
  // backward scratch
  Buf<T> dres_a, dres_b, dres2, dfcproj, dln2, dattproj, datty, dln1, dlnf, dqkv, dfch, dgelu, dpreatt, datt;
};

template <class T>
GPT<T>::GPT(const ModelConfig& cfg, int B, int Tmax)
    : Decoder<T>(cfg, gpt2_description(cfg), B, Tmax), a_(std::make_unique<Acts>()) {
  const int64_t BT = int64_t(B) * Tmax, C = cfg.n_embd, NH = cfg.n_head;
  const int64_t att = int64_t(B) * NH * Tmax * Tmax;
  auto buf = [](const char* name, int64_t n) { return Buf<T>(std::string(name), size_t(n)); };
  auto& a = *a_;
  a.encoded = buf("encoded", BT * C);
  for (int l = 0; l < cfg.n_layer; ++l) {
    a.ln1.push_back(buf("ln1", BT * C));
    a.ln1_mean.push_back(buf("ln1_mean", BT));
    a.ln1_rstd.push_back(buf("ln1_rstd", BT));
    a.qkv.push_back(buf("qkv", BT * 3 * C));
    a.atty.push_back(buf("atty", BT * C));
    a.att.push_back(buf("att", att));
    a.res2.push_back(buf("res2", BT * C));
    a.ln2.push_back(buf("ln2", BT * C));
    a.ln2_mean.push_back(buf("ln2_mean", BT));
    a.ln2_rstd.push_back(buf("ln2_rstd", BT));
    a.fch.push_back(buf("fch", BT * 4 * C));
    a.fch_gelu.push_back(buf("fch_gelu", BT * 4 * C));
    a.res3.push_back(buf("res3", BT * C));
  }
  a.preatt = buf("preatt", att);
  a.scratchC = buf("scratchC", BT * C);
  a.lnf = buf("lnf", BT * C);
  a.lnf_mean = buf("lnf_mean", BT);
  a.lnf_rstd = buf("lnf_rstd", BT);
  for (Buf<T>* b :
       {&a.dres_a, &a.dres_b, &a.dres2, &a.dfcproj, &a.dln2, &a.dattproj, &a.datty, &a.dln1, &a.dlnf})
    *b = buf("dC", BT * C);
  a.dqkv = buf("dqkv", BT * 3 * C);
  a.dfch = buf("dfch", BT * 4 * C);
  a.dgelu = buf("dgelu", BT * 4 * C);
  a.dpreatt = buf("dpreatt", att);
  a.datt = buf("datt", att);
}

template <class T>
GPT<T>::~GPT() = default;

template <class T>
int64_t GPT<T>::activation_bytes() const {
  const auto& a = *a_;
  int64_t n = 0;
  for (const auto* layer : {&a.ln1, &a.ln1_mean, &a.ln1_rstd, &a.qkv, &a.atty, &a.att, &a.res2, &a.ln2,
                            &a.ln2_mean, &a.ln2_rstd, &a.fch, &a.fch_gelu, &a.res3})
    for (const Buf<T>& b : *layer) n += int64_t(b.size());
  for (const Buf<T>* b : {&a.encoded, &a.preatt, &a.scratchC, &a.lnf,   &a.lnf_mean, &a.lnf_rstd, &a.dres_a,
                          &a.dres_b,  &a.dres2,  &a.dfcproj,  &a.dln2,  &a.dattproj, &a.datty,    &a.dln1,
                          &a.dlnf,    &a.dqkv,   &a.dfch,     &a.dgelu, &a.dpreatt,  &a.datt})
    n += int64_t(b->size());
  return n * int64_t(sizeof(T)) + this->own_bytes();
}

template <class T>
std::vector<int> GPT<T>::unit_schedule(Pass pass) const {
  const int L = cfg_.n_layer;
  std::vector<int> s;
  if (pass == Pass::Forward) {
    for (int u = 0; u <= L + 1; ++u) s.push_back(u);
    s.push_back(gpt2::kEmbeddings);  // tied LM head
  } else {
    s.push_back(gpt2::kEmbeddings);  // LM head; the encoder's backward needs no weights
    for (int u = L + 1; u >= 1; --u) s.push_back(u);
  }
  return s;
}

template <class T>
double GPT<T>::forward(CVec<int32_t> tokens, CVec<int32_t> targets, int B, int Tn, UnitSource<T>& src) {
  const int C = cfg_.n_embd, NH = cfg_.n_head, L = cfg_.n_layer;
  const int64_t BT = int64_t(B) * Tn, nC = BT * C;
  const int64_t natt = int64_t(B) * NH * Tn * Tn;
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
    CVec<T> w = src.acquire(u);
    const auto& ps = layout_.units[u].params;
    const CVec<T> x = l == 0 ? CVec<T>(a.encoded.data(), nC) : CVec<T>(a.res3[l - 1].data(), nC);
    layernorm_forward<T>(at(a.ln1[l], 0, nC), at(a.ln1_mean[l], 0, BT), at(a.ln1_rstd[l], 0, BT), x,
                         P(w, ps[LN1W]), P(w, ps[LN1B]), int(BT), C);
    matmul_forward<T>(at(a.qkv[l], 0, 3 * nC), at(a.ln1[l], 0, nC), P(w, ps[ATTNW]), P(w, ps[ATTNB]), int(BT),
                      C, 3 * C, Trans::N, this->prec_);
    attention_forward<T>(at(a.atty[l], 0, nC), at(a.preatt, 0, natt), at(a.att[l], 0, natt),
                         at(a.qkv[l], 0, 3 * nC), B, Tn, C, NH);
    matmul_forward<T>(at(a.scratchC, 0, nC), at(a.atty[l], 0, nC), P(w, ps[APROJW]), P(w, ps[APROJB]),
                      int(BT), C, C, Trans::N, this->prec_);
    residual_layernorm_forward<T>(at(a.res2[l], 0, nC), at(a.ln2[l], 0, nC), at(a.ln2_mean[l], 0, BT),
                                  at(a.ln2_rstd[l], 0, BT), x, at(a.scratchC, 0, nC), P(w, ps[LN2W]),
                                  P(w, ps[LN2B]), int(BT), C);
    matmul_forward<T>(at(a.fch[l], 0, 4 * nC), at(a.ln2[l], 0, nC), P(w, ps[FCW]), CVec<T>(), int(BT), C,
                      4 * C, Trans::N, this->prec_);  // the bias is added by bias_gelu
    bias_gelu_forward<T>(at(a.fch[l], 0, 4 * nC), at(a.fch_gelu[l], 0, 4 * nC), P(w, ps[FCB]), int(BT),
                         4 * C);
    matmul_forward<T>(at(a.scratchC, 0, nC), at(a.fch_gelu[l], 0, 4 * nC), P(w, ps[MPROJW]), P(w, ps[MPROJB]),
                      int(BT), 4 * C, C, Trans::N, this->prec_);
    residual_forward<T>(at(a.res3[l], 0, nC), at(a.res2[l], 0, nC), at(a.scratchC, 0, nC), nC);
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
  // tied LM head and loss
  return this->head_and_loss(src, emb, at(a.lnf, 0, nC), with_targets);
}

template <class T>
void GPT<T>::backward(T dloss, UnitSource<T>& src) {
  const int B = B_, Tn = Tn_;
  const int C = cfg_.n_embd, V = cfg_.vocab_size, NH = cfg_.n_head, L = cfg_.n_layer;
  const int64_t BT = int64_t(B) * Tn, nC = BT * C;
  const int64_t natt = int64_t(B) * NH * Tn * Tn;
  auto& a = *a_;
  const CVec<int32_t> tok(this->tokens_.data(), BT);

  // LM head: dlogits overwrite the probabilities in place.
  const int emb = gpt2::kEmbeddings;
  const Vec<T> dlogits = this->head_backward(dloss);
  const Vec<T> dlnf = at(a.dlnf, 0, nC);
  zero(dlnf);
  {
    const auto [w, g, ps] = acquire_for_backward(src, layout_, emb);
    const auto& wte = ps[0];
    matmul_backward<T>(dlnf, G(g, wte), Vec<T>(), dlogits, at(a.lnf, 0, nC), P(w, wte), int(BT), C, V,
                       Trans::T, this->prec_);
    src.release(emb);
  }
  // final LayerNorm: dres becomes the gradient of h.{L-1}'s output.
  Vec<T> dout = at(a.dres_a, 0, nC), din = at(a.dres_b, 0, nC);
  zero(dout);
  {
    const int u = gpt2::final_norm_unit(cfg_);
    const auto [w, g, ps] = acquire_for_backward(src, layout_, u);
    layernorm_backward<T>(dout, G(g, ps[0]), G(g, ps[1]), dlnf, at(a.res3[L - 1], 0, nC), P(w, ps[0]),
                          at(a.lnf_mean, 0, BT), at(a.lnf_rstd, 0, BT), int(BT), C);
    finish_backward(src, u);
  }
  // blocks in reverse
  const Vec<T> dres2 = at(a.dres2, 0, nC), dfcproj = at(a.dfcproj, 0, nC), dln2 = at(a.dln2, 0, nC);
  const Vec<T> dattproj = at(a.dattproj, 0, nC), datty = at(a.datty, 0, nC), dln1 = at(a.dln1, 0, nC);
  const Vec<T> dqkv = at(a.dqkv, 0, 3 * nC), dfch = at(a.dfch, 0, 4 * nC), dgelu = at(a.dgelu, 0, 4 * nC);
  for (int l = L - 1; l >= 0; --l) {
    const int u = gpt2::block_unit(l);
    const auto [w, g, ps] = acquire_for_backward(src, layout_, u);
    const CVec<T> x = l == 0 ? CVec<T>(a.encoded.data(), nC) : CVec<T>(a.res3[l - 1].data(), nC);
    for (const Vec<T>& v : {din, dres2, dfcproj, dln2, dattproj, datty, dln1, dqkv, dfch, dgelu}) zero(v);
    residual_backward<T>(dres2, dfcproj, dout, nC);
    matmul_backward<T>(dgelu, G(g, ps[MPROJW]), G(g, ps[MPROJB]), dfcproj, at(a.fch_gelu[l], 0, 4 * nC),
                       P(w, ps[MPROJW]), int(BT), 4 * C, C, Trans::N, this->prec_);
    bias_gelu_backward<T>(dfch, G(g, ps[FCB]), at(a.fch[l], 0, 4 * nC), dgelu, int(BT), 4 * C);
    matmul_backward<T>(dln2, G(g, ps[FCW]), Vec<T>(), dfch, at(a.ln2[l], 0, nC), P(w, ps[FCW]), int(BT), C,
                       4 * C, Trans::N, this->prec_);
    layernorm_backward<T>(dres2, G(g, ps[LN2W]), G(g, ps[LN2B]), dln2, at(a.res2[l], 0, nC), P(w, ps[LN2W]),
                          at(a.ln2_mean[l], 0, BT), at(a.ln2_rstd[l], 0, BT), int(BT), C);
    residual_backward<T>(din, dattproj, dres2, nC);
    matmul_backward<T>(datty, G(g, ps[APROJW]), G(g, ps[APROJB]), dattproj, at(a.atty[l], 0, nC),
                       P(w, ps[APROJW]), int(BT), C, C, Trans::N, this->prec_);
    attention_backward<T>(dqkv, at(a.dpreatt, 0, natt), at(a.datt, 0, natt), datty, at(a.qkv[l], 0, 3 * nC),
                          at(a.att[l], 0, natt), B, Tn, C, NH);
    matmul_backward<T>(dln1, G(g, ps[ATTNW]), G(g, ps[ATTNB]), dqkv, at(a.ln1[l], 0, nC), P(w, ps[ATTNW]),
                       int(BT), C, 3 * C, Trans::N, this->prec_);
    layernorm_backward<T>(din, G(g, ps[LN1W]), G(g, ps[LN1B]), dln1, x, P(w, ps[LN1W]),
                          at(a.ln1_mean[l], 0, BT), at(a.ln1_rstd[l], 0, BT), int(BT), C);
    finish_backward(src, u);
    std::swap(din, dout);  // this block's input gradient is the next one's output gradient
  }
  // embeddings: wte gets its second contribution, then the unit is complete.
  {
    const Vec<T> g = src.grad(emb);
    const auto& ps = layout_.units[emb].params;
    encoder_backward<T>(G(g, ps[0]), G(g, ps[1]), dout, tok, B, Tn, C);
    src.grad_done(emb);
  }
}

template class GPT<float>;
template class GPT<double>;

}  // namespace zeropp
