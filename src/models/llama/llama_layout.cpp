#include "src/models/llama/llama_layout.hpp"

#include "kernels/ops/lm_head_loss.hpp"
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

int64_t llama_activation_bytes(const ModelConfig& m, int B, int T) {
  const int64_t BT = int64_t(B) * T, C = m.n_embd, V = m.vocab_size, L = m.n_layer, F = llama::ffn_hidden(m);
  const int64_t S = decoder::activation_slots(m);  // L, or 1 with recomputation
  const int64_t att = BT * m.n_head * T;           // B·NH·T·T
  // Per layer res3 (BTC); per slot: xn1, qkv 3, qkv_rope 3, atty, res2,
  // xn2 (10·BTC), h 2F and g F, two rstds (2·BT) and att. Outside: encoded,
  // scratchC, xnf and three dC buffers (6·BTC), dqkv and dqkv_rope (6·BTC),
  // dh 2F, dg F, rstd_f, losses and loss weights (3·BT), preatt, dpreatt,
  // datt, one chunk of the LM head's logits and its weight gradient
  // (decoder.hpp).
  const int64_t floats = BT * C * (L + 10 * S + 12) + BT * F * (3 * S + 3) + BT * (2 * S + 3) +
                         att * (S + 3) + lm_head_chunk_rows(BT, V) * V + V * C;
  return 4 * (floats + 2 * BT);  // + int32 tokens and targets
}

double llama_forward_flops_per_token(const ModelConfig& m, int seq_len) {
  const double C = m.n_embd, L = m.n_layer, V = m.vocab_size, T = seq_len, F = llama::ffn_hidden(m);
  const double per_layer = 2.0 * (C * 3 * C + C * C + C * 2 * F + F * C) + 2.0 * 2.0 * T * C;
  return L * per_layer + 2.0 * C * V;
}

}  // namespace zeropp
