// GPT-2's parameters and its description for the engine.
//
// Unit 0 holds the embeddings (wte, wpe), units 1..L the transformer blocks
// h.0..h.{L-1}, unit L+1 the final LayerNorm. Parameters are named and
// shaped as in Hugging Face GPT-2 (Conv1D weights input-major, [C_in, C_out]).
// The LM head is tied to wte: unit 0 is declared shared.
#pragma once

#include <utility>

#include "src/models/activation_plan.hpp"
#include "src/models/model.hpp"

namespace zeropp {

ParamLayout gpt2_layout(const ModelConfig& m);
ModelDescription gpt2_description(const ModelConfig& m);

namespace gpt2 {
using namespace decoder_units;  // kEmbeddings, block_unit, final_norm_unit
// Index of each tensor in a block unit's params (gpt2_layout.cpp order).
enum BlockParam { LN1W, LN1B, ATTNW, ATTNB, APROJW, APROJB, LN2W, LN2B, FCW, FCB, MPROJW, MPROJB };
}  // namespace gpt2

// The buffers GPT<T>(m, B, T) allocates (src/models/activation_plan.hpp).
ActivationPlan gpt2_activation_plan(const ModelConfig& m, int B, int T);

// The widths of the MLP's two activations per token (fc and its GELU: 4C each).
std::pair<int, int> gpt2_mlp_widths(const ModelConfig& m);

// The matmuls with weights, the LM head and attention's two T×T products
// (2 FLOPs per multiply-add).
double gpt2_forward_flops_per_token(const ModelConfig& m, int seq_len);

}  // namespace zeropp
