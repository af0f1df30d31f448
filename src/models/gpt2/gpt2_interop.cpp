#include "src/models/gpt2/gpt2_interop.hpp"

namespace zeropp::gpt2 {

bool is_hf_attention_buffer(const std::string& name) {
  if (name.rfind("h.", 0) != 0) return false;
  size_t i = 2;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
  const std::string rest = name.substr(i);
  return i > 2 && (rest == ".attn.bias" || rest == ".attn.masked_bias");
}

namespace {

constexpr std::array<LlmcArrayName, kLlmcArrayCount> kLlmcArrays = {
    {{"wte", "wte.weight", false, false},
     {"wpe", "wpe.weight", false, false},
     {"ln1w", "ln_1.weight", true, false},
     {"ln1b", "ln_1.bias", true, false},
     {"qkvw", "attn.c_attn.weight", true, true},
     {"qkvb", "attn.c_attn.bias", true, false},
     {"attprojw", "attn.c_proj.weight", true, true},
     {"attprojb", "attn.c_proj.bias", true, false},
     {"ln2w", "ln_2.weight", true, false},
     {"ln2b", "ln_2.bias", true, false},
     {"fcw", "mlp.c_fc.weight", true, true},
     {"fcb", "mlp.c_fc.bias", true, false},
     {"fcprojw", "mlp.c_proj.weight", true, true},
     {"fcprojb", "mlp.c_proj.bias", true, false},
     {"lnfw", "ln_f.weight", false, false},
     {"lnfb", "ln_f.bias", false, false}}};

}  // namespace

const std::array<LlmcArrayName, kLlmcArrayCount>& llmc_arrays() { return kLlmcArrays; }

}  // namespace zeropp::gpt2
