#include "src/memory/inference_memory.hpp"

#include "src/models/model.hpp"
#include "src/zero/inference_weights.hpp"
#include "src/zero/state_plan.hpp"

namespace zeropp {

int64_t inference_weights_bytes(const ZeroConfig& z, const ModelConfig& m, int P, int X) {
  const StatePlan states = plan_states(z, describe_model(m), P, X, true);
  return plan_inference_weights(z, states.padded, P, X).bytes();
}

MemoryEstimate estimate_generate_memory(const Config& cfg, int P, int X, Decoding mode) {
  MemoryEstimate e = estimate_frozen_memory(cfg, P, X);
  const int B = cfg.train.batch_size, T = cfg.train.seq_len;
  e.decode =
      mode == Decoding::KVCache ? model_decode_bytes(cfg.model, B, T) : model_probs_bytes(cfg.model, B, T);
  e.inference_weights = inference_weights_bytes(cfg.zero, cfg.model, P, X);
  e.batch_keys = "--batch (prompts decoded together)";
  return e;
}

}  // namespace zeropp
