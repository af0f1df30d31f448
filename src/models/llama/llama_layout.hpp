// A small LLaMA-style decoder's parameters and its description.
//
// Unit 0 holds the token embeddings, units 1..L the blocks layers.0 ..
// layers.{L-1} (RMSNorm, fused q|k|v projection, output projection, RMSNorm,
// fused SwiGLU gate|up projection, down projection; no biases), unit L+1
// the final RMSNorm and unit L+2 the LM head. The head is untied, as in
// LLaMA: no unit is shared. Projection weights are input-major [C_in, C_out];
// the head is [V, C] like the embeddings.
#pragma once

#include <utility>

#include "src/models/activation_plan.hpp"
#include "src/models/model.hpp"

namespace zeropp {

ParamLayout llama_layout(const ModelConfig& m);
ModelDescription llama_description(const ModelConfig& m);

namespace llama {
using namespace decoder_units;  // kEmbeddings, block_unit, final_norm_unit
// Index of each tensor in a block unit's params (llama_layout.cpp order).
enum BlockParam { ATTN_NORM, WQKV, WO, FFN_NORM, W13, W2 };
inline int head_unit(const ModelConfig& m) { return m.n_layer + 2; }
// The SwiGLU hidden size F.
inline int ffn_hidden(const ModelConfig& m) { return m.ffn_hidden > 0 ? m.ffn_hidden : 4 * m.n_embd; }
}  // namespace llama

// The buffers Llama<T>(m, B, T) allocates (src/models/activation_plan.hpp).
ActivationPlan llama_activation_plan(const ModelConfig& m, int B, int T);

// The widths of the MLP's two activations per token (gate|up 2F, SwiGLU F).
std::pair<int, int> llama_mlp_widths(const ModelConfig& m);

// The weight matmuls, attention's two T×T products and the head.
double llama_forward_flops_per_token(const ModelConfig& m, int seq_len);

}  // namespace zeropp
