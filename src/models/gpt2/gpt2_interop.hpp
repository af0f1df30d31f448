// How other tools name and lay out a GPT-2's weights, beside the model whose
// layout (gpt2_layout.hpp) they map to. The file formats themselves are io/'s
// (io/interop/safetensors.hpp, io/interop/llmc_model.hpp); `zeropp ckpt import|export`
// (src/app/ckpt_convert.cpp) joins the two.
//
// Hugging Face: the state dict uses this model's parameter names and shapes,
// under "transformer." in GPT2LMHeadModel (bare in GPT2Model), plus causal-mask
// buffers that are not weights and an lm_head.weight tied to wte.
// llm.c: sixteen arrays in a fixed order, the layers stacked, the matrices
// stored [out, in] where ours are [in, out].
#pragma once

#include <array>
#include <string>

namespace zeropp::gpt2 {

// GPT2LMHeadModel's prefix of every name but lm_head.weight.
inline constexpr const char* kHfPrefix = "transformer.";
inline constexpr const char* kHfLmHead = "lm_head.weight";

// "h.<digits>.attn.bias" and "h.<digits>.attn.masked_bias" (names without the prefix).
bool is_hf_attention_buffer(const std::string& name);

// One of llm.c's arrays, in file order: its name, ours ("h.<l>." + name for
// each layer when per_layer), and whether llm.c stores it transposed.
struct LlmcArrayName {
  const char* llmc;
  const char* name;
  bool per_layer, transposed;
};
inline constexpr int kLlmcArrayCount = 16;
const std::array<LlmcArrayName, kLlmcArrayCount>& llmc_arrays();

}  // namespace zeropp::gpt2
