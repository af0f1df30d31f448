// A small LLaMA-style decoder: RMSNorm, rotary positions, SwiGLU, untied
// head; forward and backward over whatever full weights it is handed
// (src/models/model.hpp; units in llama_layout.hpp).
//
// Order of calls:
//   forward:  tok_embeddings, layers.0 .. layers.{L-1}, norm, output
//   backward: output, norm, layers.{L-1} .. layers.0, then the embeddings'
//             gradient (no weights needed: grad(0) without acquire(0))
// Every unit's gradient is complete after a single stretch of the
// backward, so the description declares no shared unit.
#pragma once

#include <memory>
#include <vector>

#include "kernels/common.hpp"
#include "src/models/llama/llama_layout.hpp"
#include "src/models/model.hpp"

namespace zeropp {

template <class T>
class Llama final : public Model<T> {
 public:
  // Activations are allocated for up to B sequences of up to Tmax tokens.
  Llama(const ModelConfig& cfg, int B, int Tmax);
  ~Llama() override;
  Llama(const Llama&) = delete;
  Llama& operator=(const Llama&) = delete;

  const ModelDescription& describe() const override { return desc_; }
  std::vector<int> unit_schedule(Pass pass) const override;
  double forward(CVec<int32_t> tokens, CVec<int32_t> targets, int B, int Tn, UnitSource<T>& src) override;
  void backward(T dloss, UnitSource<T>& src) override;
  CVec<T> probs() const override;
  int64_t activation_bytes() const override;
  // N(0, 0.02), the output and down projections N(0, 0.02/sqrt(2L)), unit
  // RMSNorm gains.
  void init_unit(int unit, uint64_t seed, int64_t begin, int64_t end, T* out) const override;

 private:
  struct Acts;
  ModelConfig cfg_;
  ModelDescription desc_;
  const ParamLayout& layout_;
  int F_;  // SwiGLU hidden size
  int B_ = 0, Tn_ = 0;
  std::unique_ptr<Acts> a_;
};

}  // namespace zeropp
