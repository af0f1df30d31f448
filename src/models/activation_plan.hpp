// A model family's activation buffers as a list: the one description both the
// model's constructor allocates from (for Bmax×Tmax) and model_activation_bytes()
// sums without allocating, so that the memory estimate (src/memory/) and what
// a run allocates cannot drift apart. Each family writes one pure function
// (gpt2_activation_plan, llama_activation_plan) that starts from the
// decoder's own buffers (decoder_activation_plan) and adds its own.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/runtime/device_buffer.hpp"
#include "src/models/model.hpp"

namespace zeropp {

struct ActivationBuffer {
  std::string name;
  int64_t elements = 0;    // per copy
  int64_t copies = 1;      // per layer: n_layer; per recomputation slot: decoder::activation_slots()
  bool token_ids = false;  // int32 token ids, else values of the model's type
};

class ActivationPlan {
 public:
  void add(std::string name, int64_t elements, int64_t copies = 1, bool token_ids = false);
  // All buffers' bytes with values of value_bytes each (token ids: 4).
  int64_t bytes(int64_t value_bytes) const;
  // The buffer called `name`; a family's bug (std::logic_error) when there is none.
  const ActivationBuffer& at(const std::string& name) const;

 private:
  std::vector<ActivationBuffer> buffers_;
};

// The buffers every decoder family allocates in its base (src/models/decoder.hpp):
// tokens and targets, one chunk of the LM head's logits, the head's weight
// gradient, the per-token losses and their weights.
ActivationPlan decoder_activation_plan(const ModelConfig& m, int B, int T);

// The plan's buffer `name`: one copy, or all of its copies.
template <class T>
Buffer<T> allocate_one(const ActivationPlan& plan, const std::string& name) {
  const ActivationBuffer& b = plan.at(name);
  if (b.copies != 1) throw std::logic_error("activation plan: '" + name + "' has several copies");
  return Buffer<T>(b.name.c_str(), b.elements);
}
template <class T>
std::vector<Buffer<T>> allocate_copies(const ActivationPlan& plan, const std::string& name) {
  const ActivationBuffer& b = plan.at(name);
  std::vector<Buffer<T>> v;
  for (int64_t i = 0; i < b.copies; ++i) v.emplace_back(b.name.c_str(), b.elements);
  return v;
}

}  // namespace zeropp
