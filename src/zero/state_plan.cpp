#include "src/zero/state_plan.hpp"

#include <algorithm>

#include "src/zero/shard.hpp"
#include "src/zero/zero_layout.hpp"

namespace zeropp {

QgzSettings qgz_settings(const ZeroConfig& z) {
  QgzSettings q;
  q.block = z.gradient_block;
  q.intra_bits = z.intra_node_gradient_bits;
  q.inter_bits = z.inter_node_gradient_bits;
  q.error_feedback = z.gradient_error_feedback;
  q.beta = z.error_feedback_beta;
  return q;
}

StatePlan plan_states(const ZeroConfig& z, const ModelDescription& desc, int P, int X, bool frozen) {
  StatePlan p;
  p.frozen = frozen;
  p.alpha = hpz_group_size(z, P, X);
  p.align = unit_align(z);
  const DType wire = wire_dtype(z);
  int64_t max_padded = 0, max_block = 0;
  for (size_t u = 0; u < desc.layout.units.size(); ++u) {
    const int64_t n = padded_size(desc.layout.units[u].numel, P, p.align);
    p.padded.push_back(n);
    p.slice.push_back(n / P);
    p.secondary.push_back(p.alpha > 1 ? bytes_of(wire, n / p.alpha) : 0);
    const bool shared = desc.shared(int(u));
    p.shared_grad.push_back(shared && !frozen ? n : 0);
    max_padded = std::max(max_padded, n);
    if (!shared) max_block = std::max(max_block, n);
  }
  const int64_t max_slice = max_padded / P;
  p.slots = z.prefetch_depth + 1;
  p.slot_floats = max_padded;
  p.slot_wire = wire == DType::F32 ? 0 : bytes_of(wire, max_padded);
  if (z.quantized_weights) p.slot_wire = std::max(p.slot_wire, weight_scheme(z).packed_bytes(max_slice) * P);
  if (frozen) return p;              // a frozen engine never reduces a gradient
  p.unit_grads = z.overlap ? 2 : 1;  // with overlap: one reduced while the next is filled
  p.unit_grad_floats = max_block;
  p.reduced_floats = max_slice;
  if (z.quantized_gradients) p.qgz = qgz_buffers(p.padded, X, qgz_settings(z));
  return p;
}

MemoryReport StatePlan::report() const {
  MemoryReport r;
  for (size_t u = 0; u < padded.size(); ++u) {
    r.master += 4 * slice[u];
    if (!frozen) {
      r.grad += 4 * slice[u];
      r.adam += 8 * slice[u];
    }
    r.secondary += secondary[u];
    r.grad_full += 4 * shared_grad[u];
  }
  r.gather = slots * (4 * slot_floats + slot_wire);
  r.grad_full += 4 * (unit_grads * unit_grad_floats + reduced_floats);
  r.qgz = qgz ? qgz->bytes() : 0;
  return r;
}

}  // namespace zeropp
