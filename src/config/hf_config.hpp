// A Hugging Face GPT-2's config.json (beside model.safetensors): read by `zeropp ckpt import`,
// written by `zeropp ckpt export`.
#pragma once

#include <string>

#include "src/config/config.hpp"

namespace zeropp {

// The model's shape; refuses what zeropp's GPT-2 would compute differently
// (another activation, epsilon, MLP width, an untied LM head). Error naming
// the file and the key.
ModelConfig read_hf_config(const std::string& path);

// The config.json of GPT2LMHeadModel for m (what read_hf_config reads back as m).
std::string hf_config_text(const ModelConfig& m);

}  // namespace zeropp
