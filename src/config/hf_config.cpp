#include "src/config/hf_config.hpp"

#include <climits>
#include <fstream>
#include <nlohmann/json.hpp>

#include "src/base/errors.hpp"

namespace zeropp {

using json = nlohmann::json;

ModelConfig read_hf_config(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw Error(path + ": cannot open (the config.json beside model.safetensors gives the model's shape)");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception& e) {
    throw Error(path + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw Error(path + ": not a JSON object");
  auto positive = [&](const char* key) {
    if (!j.contains(key) || !j[key].is_number_integer() || j[key].get<int64_t>() <= 0 ||
        j[key].get<int64_t>() > INT_MAX)
      throw Error(path + ": key '" + key + "' missing or not a positive integer");
    return j[key].get<int>();
  };
  ModelConfig m;
  m.vocab_size = positive("vocab_size");
  m.max_seq_len = positive("n_positions");
  m.n_layer = positive("n_layer");
  m.n_head = positive("n_head");
  m.n_embd = positive("n_embd");
  if (m.n_embd % m.n_head != 0)
    throw Error(path + ": n_embd " + std::to_string(m.n_embd) + " is not a multiple of n_head " +
                std::to_string(m.n_head));
  auto refuse_unless = [&](const char* key, const json& ours, const char* why) {
    if (j.contains(key) && !j[key].is_null() && j[key] != ours)
      throw Error(path + ": " + key + " = " + j[key].dump() + "; zeropp's GPT-2 has " + ours.dump() + " (" +
                  why + ")");
  };
  refuse_unless("model_type", "gpt2", "the GPT-2 family only");
  refuse_unless("activation_function", "gelu_new", "GELU, tanh approximation");
  refuse_unless("layer_norm_epsilon", 1e-5, "LayerNorm epsilon");
  refuse_unless("n_inner", 4 * m.n_embd, "MLP width 4 C");
  refuse_unless("tie_word_embeddings", true, "the LM head is wte");
  return m;
}

std::string hf_config_text(const ModelConfig& m) {
  const json c = {{"architectures", {"GPT2LMHeadModel"}},
                  {"model_type", "gpt2"},
                  {"vocab_size", m.vocab_size},
                  {"n_positions", m.max_seq_len},
                  {"n_ctx", m.max_seq_len},
                  {"n_embd", m.n_embd},
                  {"n_layer", m.n_layer},
                  {"n_head", m.n_head},
                  {"activation_function", "gelu_new"},
                  {"layer_norm_epsilon", 1e-5},
                  {"tie_word_embeddings", true}};
  return c.dump(2) + "\n";
}

}  // namespace zeropp
