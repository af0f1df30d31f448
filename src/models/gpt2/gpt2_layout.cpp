#include "src/models/gpt2/gpt2_layout.hpp"

#include "kernels/ops/lm_head_loss.hpp"
#include "src/models/decoder_parts.hpp"

namespace zeropp {

ParamLayout gpt2_layout(const ModelConfig& m) {
  using I = ParamSpec::Init;
  const auto add = ParamLayout::add;
  const int64_t V = m.vocab_size, T = m.max_seq_len, C = m.n_embd;
  ParamLayout L;
  UnitSpec emb{"embeddings", {}, 0};
  add(emb, "wte.weight", {V, C}, true, I::Normal);
  add(emb, "wpe.weight", {T, C}, true, I::Normal);
  L.units.push_back(emb);
  for (int l = 0; l < m.n_layer; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    UnitSpec u{"h." + std::to_string(l), {}, 0};
    add(u, h + "ln_1.weight", {C}, false, I::Ones);
    add(u, h + "ln_1.bias", {C}, false, I::Zeros);
    add(u, h + "attn.c_attn.weight", {C, 3 * C}, true, I::Normal);
    add(u, h + "attn.c_attn.bias", {3 * C}, false, I::Zeros);
    add(u, h + "attn.c_proj.weight", {C, C}, true, I::ResidualNormal);
    add(u, h + "attn.c_proj.bias", {C}, false, I::Zeros);
    add(u, h + "ln_2.weight", {C}, false, I::Ones);
    add(u, h + "ln_2.bias", {C}, false, I::Zeros);
    add(u, h + "mlp.c_fc.weight", {C, 4 * C}, true, I::Normal);
    add(u, h + "mlp.c_fc.bias", {4 * C}, false, I::Zeros);
    add(u, h + "mlp.c_proj.weight", {4 * C, C}, true, I::ResidualNormal);
    add(u, h + "mlp.c_proj.bias", {C}, false, I::Zeros);
    L.units.push_back(u);
  }
  UnitSpec lnf{"ln_f", {}, 0};
  add(lnf, "ln_f.weight", {C}, false, I::Ones);
  add(lnf, "ln_f.bias", {C}, false, I::Zeros);
  L.units.push_back(lnf);
  L.finish();
  return L;
}

ModelDescription gpt2_description(const ModelConfig& m) {
  ModelDescription d = decoder_description("gpt2", m, gpt2_layout(m));
  d.shared_units = {gpt2::kEmbeddings};  // wte is also the LM head
  return d;
}

std::pair<int, int> gpt2_mlp_widths(const ModelConfig& m) { return {4 * m.n_embd, 4 * m.n_embd}; }

int64_t gpt2_activation_bytes(const ModelConfig& m, int B, int T) {
  const int64_t BT = int64_t(B) * T, C = m.n_embd, V = m.vocab_size, L = m.n_layer;
  const int64_t S = decoder::activation_slots(m);  // L, or 1 with recomputation
  const int64_t att = BT * m.n_head * T;           // B·NH·T·T
  // Per layer res3 (BTC); per slot 15·BTC (ln1, qkv 3, atty, res2, ln2,
  // fch 4, fch_gelu 4), 4·BT (LayerNorm means and rstds) and att; outside
  // the layers: encoded, lnf and three dC buffers, dqkv 3, dfch 4, dgelu 4
  // (16·BTC), lnf mean/rstd, losses and loss weights (4·BT), preatt,
  // dpreatt, datt, one chunk of the LM head's logits and its weight
  // gradient (decoder.hpp).
  const int64_t floats =
      BT * C * (L + 15 * S + 16) + BT * (4 * S + 4) + att * (S + 3) + lm_head_chunk_rows(BT, V) * V + V * C;
  return 4 * (floats + 2 * BT);  // + int32 tokens and targets
}

double gpt2_forward_flops_per_token(const ModelConfig& m, int seq_len) {
  const double C = m.n_embd, L = m.n_layer, V = m.vocab_size, T = seq_len;
  const double per_layer = 2.0 * (C * 3 * C + C * C + 2 * C * 4 * C)  // the four weight matmuls
                           + 2.0 * 2.0 * T * C;                       // q·k^T and att·v (full T×T)
  return L * per_layer + 2.0 * C * V;                                 // + LM head
}

}  // namespace zeropp
