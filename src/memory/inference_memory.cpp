#include "src/memory/inference_memory.hpp"

#include <algorithm>

#include "src/models/model.hpp"
#include "src/zero/inference_weights.hpp"
#include "src/zero/shard.hpp"
#include "src/zero/zero_layout.hpp"

namespace zeropp {

int64_t inference_weights_bytes(const ZeroConfig& z, const ModelConfig& m, int P, int X) {
  const InferenceRoute route = inference_route(z.inference_weights);
  const int alpha = route.group ? inference_group_size(z, P, X) : 1;
  const int64_t wire_bytes = bytes_of(wire_dtype(z), 1), align = unit_align(z);
  const QuantScheme q{route.bits == 0 ? 8 : route.bits, z.weight_block, ScaleDType::F32};
  int64_t copy = 0, full = 0, wire = 0, send = 0, stage = 0;
  for (const UnitSpec& u : describe_model(m).layout.units) {
    const int64_t padded = padded_size(u.numel, P, align), slice = padded / P;
    if (route.bits) {  // one rank's slice in whole blocks, packed with its scales
      const int64_t elems = (slice + q.block - 1) / q.block * q.block, chunk = q.packed_bytes(elems);
      copy += chunk * (P / alpha);
      send = std::max(send, chunk);
      if (route.group) wire = std::max(wire, chunk * P);
      stage = std::max(stage, elems * P);
    } else {
      if (route.group) copy += wire_bytes * (padded / alpha);
      if (route.full) copy += 4 * padded;
      if (wire_bytes == 2) {
        send = std::max(send, 2 * slice);
        wire = std::max(wire, 2 * padded);
      }
    }
    full = std::max(full, padded);
  }
  return copy + 4 * stage + 2 * (4 * full + send + wire);  // two slots: fp32 unit, send and wire buffers
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
