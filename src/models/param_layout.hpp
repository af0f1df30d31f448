// Where every parameter of a model lives: units, names, shapes, offsets.
//
// Parameters are grouped into units, the granularity at which the engine
// gathers, reduces and shards them (FSDP's flat parameters). A unit is one
// flat buffer: its parameters in the order the model adds them, each
// row-major in its logical shape. Each family builds its own layout
// (e.g. src/models/gpt2/gpt2_layout.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zeropp {

struct ParamSpec {
  std::string name;            // e.g. "h.3.attn.c_attn.weight" (GPT-2: Hugging Face's names)
  std::vector<int64_t> shape;  // logical (global) shape
  int64_t offset = 0;          // first element within its unit's flat buffer
  int64_t numel = 0;
  bool decay = false;  // AdamW weight decay: matrices and embeddings only
  // Normal: N(0, std); ResidualNormal: N(0, the family's smaller residual std)
  enum class Init { Normal, ResidualNormal, Zeros, Ones } init = Init::Zeros;
};

struct UnitSpec {
  std::string name;  // "embeddings", "h.3", "ln_f"
  std::vector<ParamSpec> params;
  int64_t numel = 0;
};

struct ParamLayout {
  std::vector<UnitSpec> units;
  int64_t numel = 0;  // all parameters (tied ones counted once)

  // Appends a parameter to unit u's flat buffer.
  static void add(UnitSpec& u, std::string name, std::vector<int64_t> shape, bool decay,
                  ParamSpec::Init init);
  // Sets numel from the units.
  void finish();
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

// Initial values of unit elements [begin, end) (padding past the last
// parameter: 0). Normal draws are counter-based: element i of unit `unit`
// depends only on (seed, unit, i), so any split gives the same weights.
template <class T>
void init_elements(const UnitSpec& u, int unit, uint64_t seed, double std, double std_resid, int64_t begin,
                   int64_t end, T* out);

}  // namespace zeropp
