#include "src/memory/memory_estimate.hpp"

#include "src/base/logging.hpp"
#include "src/models/model.hpp"

namespace zeropp {

int64_t activation_bytes(const ModelConfig& m, int B, int T) {
  return model_activation_bytes(m, B, T) + 8 * int64_t(B) * T;  // + the engine's int32 inputs and targets
}

std::string recompute_summary(const ModelConfig& m, int B, int T) {
  std::string s = std::string(deck_name(m.recompute)) + ": activations " +
                  human_bytes(double(activation_bytes(m, B, T))) + " (";
  for (const auto& p : deck_names(Recompute{})) {
    if (m.recompute == p.value) continue;
    ModelConfig other = m;
    other.recompute = p.value;
    s += std::string(p.name) + " " + human_bytes(double(activation_bytes(other, B, T)));
  }
  return s + ")";
}

namespace {

MemoryEstimate estimate(const Config& cfg, int P, int X, bool frozen) {
  const StatePlan plan = plan_states(cfg.zero, describe_model(cfg.model), P, X, frozen);
  MemoryEstimate e;
  e.states = plan.report();
  e.activations = activation_bytes(cfg.model, cfg.train.batch_size, cfg.train.seq_len);
  // What a checkpoint holds of this rank (at most: the slices include padding).
  if (!frozen && cfg.checkpoint.async)
    e.checkpoint_snapshot =
        e.states.master + e.states.adam + (plan.qgz ? plan.qgz->error_feedback_bytes() : 0);
  return e;
}

}  // namespace

MemoryEstimate estimate_memory(const Config& cfg, int P, int X) { return estimate(cfg, P, X, false); }
MemoryEstimate estimate_frozen_memory(const Config& cfg, int P, int X) { return estimate(cfg, P, X, true); }

}  // namespace zeropp
