// Where every GPT-2 parameter lives: units, names, shapes, offsets.
//
// Parameters are grouped into units, the granularity at which the engine
// gathers, reduces and shards them (FSDP's flat parameters): unit 0 holds the
// embeddings (wte, wpe), units 1..L the transformer blocks h.0..h.{L-1},
// unit L+1 the final LayerNorm. A unit is one flat buffer: its parameters in
// the order below, each row-major in Hugging Face GPT-2's shape (Conv1D
// weights input-major, [C_in, C_out]). The LM head is tied to wte.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/config/config.hpp"

namespace zeropp {

struct ParamSpec {
  std::string name;            // Hugging Face name, e.g. "h.3.attn.c_attn.weight"
  std::vector<int64_t> shape;  // logical (global) shape
  int64_t offset = 0;          // first element within its unit's flat buffer
  int64_t numel = 0;
  bool decay = false;  // AdamW weight decay: matrices and embeddings only
  enum class Init { Normal, ResidualNormal, Zeros, Ones } init = Init::Zeros;
};

struct UnitSpec {
  std::string name;  // "embeddings", "h.3", "ln_f"
  std::vector<ParamSpec> params;
  int64_t numel = 0;
};

struct ParamLayout {
  std::vector<UnitSpec> units;
  int64_t numel = 0;  // all parameters (wte counted once)

  static ParamLayout gpt2(const ModelConfig& m);
  int embeddings_unit() const { return 0; }
  int block_unit(int layer) const { return 1 + layer; }
  int final_norm_unit() const { return int(units.size()) - 1; }
  // The parameter called `name`, or nullptr.
  const ParamSpec* find(const std::string& name, int* unit = nullptr) const;
};

// The part of one parameter that falls into a range of its unit's flat buffer:
// unit elements [unit_begin, unit_end), i.e. the parameter's own flat
// (row-major) elements [unit_begin - offset, unit_end - offset).
struct ParamPiece {
  const ParamSpec* param;
  int64_t unit_begin, unit_end;
  int64_t begin() const { return unit_begin - param->offset; }
  int64_t end() const { return unit_end - param->offset; }
};

// The pieces of unit u's parameters inside [begin, end), in order (padding
// past the last parameter yields nothing).
std::vector<ParamPiece> params_in(const UnitSpec& u, int64_t begin, int64_t end);

// Forward FLOPs per token (2 per multiply-add): the matmuls with weights,
// the LM head and attention's two T×T products, as in PaLM's appendix B.
// Training is 3x this (forward + backward).
double forward_flops_per_token(const ModelConfig& m, int seq_len);

}  // namespace zeropp
