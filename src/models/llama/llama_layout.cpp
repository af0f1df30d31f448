#include "src/models/llama/llama_layout.hpp"

#include "src/models/decoder_parts.hpp"

namespace zeropp {

ParamLayout llama_layout(const ModelConfig& m) {
  using I = ParamSpec::Init;
  const auto add = ParamLayout::add;
  const int64_t V = m.vocab_size, C = m.n_embd, F = llama::ffn_hidden(m);
  ParamLayout L;
  UnitSpec emb{"tok_embeddings", {}, 0};
  add(emb, "tok_embeddings.weight", {V, C}, true, I::Normal);
  L.units.push_back(emb);
  for (int l = 0; l < m.n_layer; ++l) {
    const std::string h = "layers." + std::to_string(l) + ".";
    UnitSpec u{"layers." + std::to_string(l), {}, 0};
    add(u, h + "attention_norm.weight", {C}, false, I::Ones);
    add(u, h + "attention.wqkv.weight", {C, 3 * C}, true, I::Normal);
    add(u, h + "attention.wo.weight", {C, C}, true, I::ResidualNormal);
    add(u, h + "ffn_norm.weight", {C}, false, I::Ones);
    add(u, h + "feed_forward.w13.weight", {C, 2 * F}, true, I::Normal);  // gate | up
    add(u, h + "feed_forward.w2.weight", {F, C}, true, I::ResidualNormal);
    L.units.push_back(u);
  }
  UnitSpec norm{"norm", {}, 0};
  add(norm, "norm.weight", {C}, false, I::Ones);
  L.units.push_back(norm);
  UnitSpec head{"output", {}, 0};
  add(head, "output.weight", {V, C}, true, I::Normal);
  L.units.push_back(head);
  L.finish();
  return L;
}

ModelDescription llama_description(const ModelConfig& m) {
  ModelDescription d = decoder_description("llama", m, llama_layout(m));
  d.identity.emplace_back("ffn_hidden", std::to_string(llama::ffn_hidden(m)));
  return d;
}

std::pair<int, int> llama_mlp_widths(const ModelConfig& m) {
  return {2 * llama::ffn_hidden(m), llama::ffn_hidden(m)};
}

ActivationPlan llama_activation_plan(const ModelConfig& m, int B, int T) {
  const int64_t BT = int64_t(B) * T, C = m.n_embd, F = llama::ffn_hidden(m);
  const int64_t S = decoder::activation_slots(m);  // L, or 1 with recomputation
  const int64_t att = BT * m.n_head * T;           // B·NH·T·T
  ActivationPlan p = decoder_activation_plan(m, B, T);
  p.add("encoded", BT * C);          // the residual stream into layers.0
  p.add("res3", BT * C, m.n_layer);  // each block's output, the next one's input
  // What a block's backward needs, per slot.
  for (const char* name : {"xn1", "atty", "res2", "xn2"}) p.add(name, BT * C, S);
  for (const char* name : {"rstd1", "rstd2"}) p.add(name, BT, S);
  for (const char* name : {"qkv", "qkv_rope"}) p.add(name, BT * 3 * C, S);
  p.add("att", att, S);
  p.add("h", BT * 2 * F, S);  // gate and up
  p.add("g", BT * F, S);      // SwiGLU
  // Forward scratch, the final norm, and the backward's scratch: dres the
  // residual stream's gradient, dC each block's [B,T,C] gradients in turn, dxnf
  // the final norm's output gradient (written by the forward's LM head).
  for (const char* name : {"scratchC", "xnf", "dres", "dC", "dxnf"}) p.add(name, BT * C);
  p.add("rstdf", BT);
  for (const char* name : {"preatt", "dpreatt", "datt"}) p.add(name, att);
  for (const char* name : {"dqkv", "dqkv_rope"}) p.add(name, BT * 3 * C);
  p.add("dh", BT * 2 * F);
  p.add("dg", BT * F);
  return p;
}

double llama_forward_flops_per_token(const ModelConfig& m, int seq_len) {
  const double C = m.n_embd, L = m.n_layer, V = m.vocab_size, T = seq_len, F = llama::ffn_hidden(m);
  const double per_layer = 2.0 * (C * 3 * C + C * C + C * 2 * F + F * C) + 2.0 * 2.0 * T * C;
  return L * per_layer + 2.0 * C * V;
}

}  // namespace zeropp
