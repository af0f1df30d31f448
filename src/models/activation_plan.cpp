#include "src/models/activation_plan.hpp"

#include <stdexcept>

#include "kernels/ops/lm_head_loss.hpp"

namespace zeropp {

void ActivationPlan::add(std::string name, int64_t elements, int64_t copies, bool token_ids) {
  buffers_.push_back({std::move(name), elements, copies, token_ids});
}

int64_t ActivationPlan::bytes(int64_t value_bytes) const {
  int64_t n = 0;
  for (const ActivationBuffer& b : buffers_) n += b.copies * b.elements * (b.token_ids ? 4 : value_bytes);
  return n;
}

const ActivationBuffer& ActivationPlan::at(const std::string& name) const {
  for (const ActivationBuffer& b : buffers_)
    if (b.name == name) return b;
  throw std::logic_error("activation plan: no buffer '" + name + "'");
}

ActivationPlan decoder_activation_plan(const ModelConfig& m, int B, int T) {
  const int64_t BT = int64_t(B) * T, V = m.vocab_size;
  ActivationPlan p;
  p.add("tokens", BT, 1, true);
  p.add("targets", BT, 1, true);
  p.add("logits", lm_head_chunk_rows(BT, V) * V);  // one chunk of rows: logits, probabilities, dlogits
  p.add("head_grad", V * m.n_embd);
  p.add("losses", BT);
  p.add("loss_weights", BT);
  return p;
}

}  // namespace zeropp
