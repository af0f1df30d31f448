#include "src/memory/memory_estimate.hpp"

#include <algorithm>
#include <vector>

#include "src/base/logging.hpp"
#include "src/models/model.hpp"
#include "src/zero/shard.hpp"
#include "src/zero/zero_layout.hpp"

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
  const ZeroConfig& z = cfg.zero;
  const ModelDescription desc = describe_model(cfg.model);
  const ParamLayout& layout = desc.layout;
  const int64_t align = unit_align(z);
  const int64_t wire_bytes = bytes_of(wire_dtype(z), 1);
  const int alpha = hpz_group_size(z, P, X);
  MemoryEstimate e;
  MemoryReport& r = e.states;
  int64_t max_padded = 0, max_block = 0, shared = 0;
  std::vector<int64_t> padded;
  for (size_t u = 0; u < layout.units.size(); ++u) {
    const int64_t n = padded_size(layout.units[u].numel, P, align), slice = n / P;
    r.master += 4 * slice;
    if (!frozen) {
      r.grad += 4 * slice;
      r.adam += 8 * slice;
    }
    if (alpha > 1) r.secondary += wire_bytes * (n / alpha);
    max_padded = std::max(max_padded, n);
    if (desc.shared(int(u)))
      shared += n;  // a gradient buffer of its own
    else
      max_block = std::max(max_block, n);
    padded.push_back(n);
  }
  // prefetch_depth + 1 gather slots: the fp32 unit, and (bf16 or qwZ) what is received (our slice in place).
  const int64_t max_slice = max_padded / P;
  int64_t wire = wire_bytes == 4 ? 0 : wire_bytes * max_padded;
  if (z.quantized_weights) wire = std::max(wire, weight_scheme(z).packed_bytes(max_slice) * P);
  r.gather = (z.prefetch_depth + 1) * (4 * max_padded + wire);
  e.activations = activation_bytes(cfg.model, cfg.train.batch_size, cfg.train.seq_len);
  if (frozen) return e;
  int64_t error_feedback = 0;
  // overlap: one reduced, one filled; and this rank's reduced slice
  r.grad_full = 4 * (shared + (z.overlap ? 2 : 1) * max_block + max_slice);
  if (z.quantized_gradients) {  // QgzReducer's staging, sized for the largest unit
    const int64_t chunk = max_padded / X, block = z.gradient_block;
    r.qgz = 4 * (2 * max_padded + chunk + 2 * (max_padded / block) + 2 * (chunk / block)) +
            2 * (intra_gradient_scheme(z).payload_bytes(max_padded) +
                 inter_gradient_scheme(z).payload_bytes(chunk));
    if (z.gradient_error_feedback)
      for (int64_t n : padded) error_feedback += 4 * (n + n / X);
    r.qgz += error_feedback;
  }
  // What a checkpoint holds of this rank (at most: the slices include padding).
  if (cfg.checkpoint.async) e.checkpoint_snapshot = r.master + r.adam + error_feedback;
  return e;
}

}  // namespace

MemoryEstimate estimate_memory(const Config& cfg, int P, int X) { return estimate(cfg, P, X, false); }
MemoryEstimate estimate_frozen_memory(const Config& cfg, int P, int X) { return estimate(cfg, P, X, true); }

}  // namespace zeropp
