#include "src/models/param_layout.hpp"

#include <algorithm>

namespace zeropp {

namespace {
void add(UnitSpec& u, std::string name, std::vector<int64_t> shape, bool decay, ParamSpec::Init init) {
  ParamSpec p;
  p.name = std::move(name);
  p.shape = std::move(shape);
  p.numel = 1;
  for (auto d : p.shape) p.numel *= d;
  p.offset = u.numel;
  p.decay = decay;
  p.init = init;
  u.numel += p.numel;
  u.params.push_back(std::move(p));
}
}  // namespace

ParamLayout ParamLayout::gpt2(const ModelConfig& m) {
  using I = ParamSpec::Init;
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
  for (const auto& u : L.units) L.numel += u.numel;
  return L;
}

const ParamSpec* ParamLayout::find(const std::string& name, int* unit) const {
  for (size_t u = 0; u < units.size(); ++u)
    for (const auto& p : units[u].params)
      if (p.name == name) {
        if (unit) *unit = int(u);
        return &p;
      }
  return nullptr;
}

std::vector<ParamPiece> params_in(const UnitSpec& u, int64_t begin, int64_t end) {
  std::vector<ParamPiece> out;
  for (const auto& p : u.params) {
    const int64_t b = std::max(begin, p.offset), e = std::min(end, p.offset + p.numel);
    if (b < e) out.push_back({&p, b, e});
  }
  return out;
}

double forward_flops_per_token(const ModelConfig& m, int seq_len) {
  const double C = m.n_embd, L = m.n_layer, V = m.vocab_size, T = seq_len;
  const double per_layer = 2.0 * (C * 3 * C + C * C + 2 * C * 4 * C)  // the four weight matmuls
                           + 2.0 * 2.0 * T * C;                       // q·k^T and att·v (full T×T)
  return L * per_layer + 2.0 * C * V;                                 // + LM head
}

}  // namespace zeropp
