#include "src/models/model.hpp"

#include <algorithm>
#include <utility>

#include "src/base/errors.hpp"
#include "src/models/gpt2/gpt2.hpp"
#include "src/models/kv_cache.hpp"
#include "src/models/llama/llama.hpp"

namespace zeropp {

namespace {

// One entry per family: adding a family adds a row here and nothing in the engine.
struct Family {
  ModelFamily id;
  ModelDescription (*describe)(const ModelConfig&);
  std::unique_ptr<Model<float>> (*make_float)(const ModelConfig&, int, int);
  std::unique_ptr<Model<double>> (*make_double)(const ModelConfig&, int, int);
  ActivationPlan (*activation_plan)(const ModelConfig&, int, int);
  std::pair<int, int> (*mlp_widths)(const ModelConfig&);  // the decode scratch's two MLP activations
  double (*flops)(const ModelConfig&, int);
};

template <template <class> class M, class T>
std::unique_ptr<Model<T>> make(const ModelConfig& m, int B, int Tmax) {
  return std::make_unique<M<T>>(m, B, Tmax);
}

const Family kFamilies[] = {
    {ModelFamily::Gpt2, gpt2_description, make<GPT, float>, make<GPT, double>, gpt2_activation_plan,
     gpt2_mlp_widths, gpt2_forward_flops_per_token},
    {ModelFamily::Llama, llama_description, make<Llama, float>, make<Llama, double>, llama_activation_plan,
     llama_mlp_widths, llama_forward_flops_per_token},
};

const Family& family(const ModelConfig& m) {
  for (const Family& f : kFamilies)
    if (m.family == f.id) return f;
  throw Error("model.family = \"" + std::string(deck_name(m.family)) + "\": not in the family table");
}

}  // namespace

bool ModelDescription::shared(int unit) const {
  return std::find(shared_units.begin(), shared_units.end(), unit) != shared_units.end();
}

ModelDescription decoder_description(const std::string& family, const ModelConfig& m, ParamLayout layout) {
  ModelDescription d;
  d.family = family;
  d.layout = std::move(layout);
  d.identity = {{"family", family},
                {"vocab_size", std::to_string(m.vocab_size)},
                {"max_seq_len", std::to_string(m.max_seq_len)},
                {"n_layer", std::to_string(m.n_layer)},
                {"n_head", std::to_string(m.n_head)},
                {"n_embd", std::to_string(m.n_embd)}};
  return d;
}

std::string identity_differences(const ModelDescription& was, const ModelDescription& now) {
  std::string out;
  auto value = [](const ModelDescription& d, const std::string& key) -> std::string {
    for (const auto& kv : d.identity)
      if (kv.first == key) return kv.second;
    return "(none)";
  };
  std::vector<std::string> keys;
  for (const auto* d : {&was, &now})
    for (const auto& kv : d->identity)
      if (std::find(keys.begin(), keys.end(), kv.first) == keys.end()) keys.push_back(kv.first);
  for (const auto& k : keys) {
    const std::string a = value(was, k), b = value(now, k);
    if (a != b) out += (out.empty() ? "" : "; ") + k + ": " + a + " -> " + b;
  }
  return out;
}

ModelDescription describe_model(const ModelConfig& m) { return family(m).describe(m); }

template <>
std::unique_ptr<Model<float>> make_model<float>(const ModelConfig& m, int B, int Tmax) {
  return family(m).make_float(m, B, Tmax);
}
template <>
std::unique_ptr<Model<double>> make_model<double>(const ModelConfig& m, int B, int Tmax) {
  return family(m).make_double(m, B, Tmax);
}

int64_t model_activation_bytes(const ModelConfig& m, int B, int T) {
  return family(m).activation_plan(m, B, T).bytes(sizeof(float));
}

int64_t model_decode_bytes(const ModelConfig& m, int B, int Tmax) {
  const auto [H1, H2] = family(m).mlp_widths(m);
  return 4 * (kv_cache_elems(m.n_layer, B, Tmax, m.n_embd) +
              decode_scratch_elems(B, Tmax, m.n_embd, m.n_head, H1, H2, m.vocab_size));
}

int64_t model_probs_bytes(const ModelConfig& m, int Bmax, int Tmax) {
  return 4 * int64_t(Bmax) * Tmax * m.vocab_size;
}

double forward_flops_per_token(const ModelConfig& m, int seq_len) { return family(m).flops(m, seq_len); }

}  // namespace zeropp
