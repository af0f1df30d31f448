#include "src/models/gpt2/gpt2_layout.hpp"

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

ActivationPlan gpt2_activation_plan(const ModelConfig& m, int B, int T) {
  const int64_t BT = int64_t(B) * T, C = m.n_embd;
  const int64_t S = decoder::activation_slots(m);  // L, or 1 with recomputation
  const int64_t att = BT * m.n_head * T;           // B·NH·T·T
  ActivationPlan p = decoder_activation_plan(m, B, T);
  p.add("encoded", BT * C);          // the residual stream into h.0
  p.add("res3", BT * C, m.n_layer);  // each block's output, the next one's input
  // What a block's backward needs, per slot.
  for (const char* name : {"ln1", "atty", "res2", "ln2"}) p.add(name, BT * C, S);
  for (const char* name : {"ln1_mean", "ln1_rstd", "ln2_mean", "ln2_rstd"}) p.add(name, BT, S);
  p.add("qkv", BT * 3 * C, S);
  p.add("att", att, S);
  p.add("fch", BT * 4 * C, S);
  p.add("fch_gelu", BT * 4 * C, S);
  // Forward scratch, the final LayerNorm, and the backward's scratch: dres the
  // residual stream's gradient, dC each block's [B,T,C] gradients in turn, dlnf
  // ln_f's output gradient (written by the forward's LM head).
  for (const char* name : {"lnf", "dres", "dC", "dlnf"}) p.add(name, BT * C);
  for (const char* name : {"lnf_mean", "lnf_rstd"}) p.add(name, BT);
  for (const char* name : {"preatt", "dpreatt", "datt"}) p.add(name, att);
  p.add("dqkv", BT * 3 * C);
  p.add("dfch", BT * 4 * C);
  p.add("dgelu", BT * 4 * C);
  return p;
}

double gpt2_forward_flops_per_token(const ModelConfig& m, int seq_len) {
  const double C = m.n_embd, L = m.n_layer, V = m.vocab_size, T = seq_len;
  const double per_layer = 2.0 * (C * 3 * C + C * C + 2 * C * 4 * C)  // the four weight matmuls
                           + 2.0 * 2.0 * T * C;                       // q·k^T and att·v (full T×T)
  return L * per_layer + 2.0 * C * V;                                 // + LM head
}

}  // namespace zeropp
