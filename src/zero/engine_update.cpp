// The step's end: global gradient norm, clipping and AdamW, unit by unit.
//
// When the backward ends, every unit's gradient shard is final but the last
// one reduced (with overlap it is still in flight). Each unit's squared norm
// is taken while that reduction runs. With clipping (optim.grad_clip > 0)
// AdamW needs the global norm, i.e. every unit and an all-reduce, first;
// without it each unit is updated at once and only the last one waits for its
// reduction. The units are updated in the order the next forward uses them,
// and each one's next-step gathers start as soon as it is updated (cross-step
// prefetch), so they travel under the remaining updates instead of in front
// of the next forward, and stay in flight into the next step. Results are bitwise
// those of updating in unit order after the norm: the units are independent
// and the norm sums the same per-unit values in unit order.
#include <cmath>

#include "kernels/ops/sum_squares.hpp"
#include "src/zero/engine_impl.hpp"

namespace zeropp {

void Engine::Impl::update(StepStats& st, double loss, const OptimConfig& o, double lr, int64_t step,
                          bool next_step) {
  const bool early = z.overlap && o.grad_clip == 0;  // AdamW needs no norm
  const bool carry = z.overlap && z.prefetch_depth > 0 && next_step;
  invalidate_secondaries();  // the forward and backward are done; the weights change now
  const auto adamw = [&](int u, float scale) {
    UnitShard& s = units[size_t(u)];
    adamw_shard(s.master.view(), s.m.view(), s.v.view(), s.grad.view(), s.segments, s.mine.begin, o, lr,
                int(step + 1), scale);
    if (carry) start_carried(u);
  };
  const auto norm2 = [&](int u) {
    const UnitShard& s = units[size_t(u)];
    unit_norm2[size_t(u)] = sum_squares<float>(CVec<float>(s.grad.data(), s.slice), s.slice);
  };
  const int last = pending.unit;  // -1: every reduction has completed
  for (int u : update_order) {
    if (u == last) continue;
    norm2(u);
    if (early) adamw(u, 1.0f);
    progress();
  }
  finish_reduce();
  if (last >= 0) {
    norm2(last);
    if (early) adamw(last, 1.0f);
  }
  double sums[3] = {loss, 0, 0};  // loss, squared gradient norm, cross-node bytes of this step
  for (double q : unit_norm2) sums[1] += q;
  sums[2] = double(comm.counters().total().inter);
  // MPI may move the bytes of next-step gathers that the early AdamW started
  // (start_carried) into their buffers here: open as around any of ours.
  with_device_access([&] { comm.allreduce_sum(world, sums, 3, Purpose::Other, "loss+norm+bytes"); });
  st.loss = sums[0] / topo.P;
  st.grad_norm = std::sqrt(sums[1]);
  st.inter_node_bytes_all = sums[2];
  if (!early) {
    const double clip = o.grad_clip;
    const float scale = clip > 0 && st.grad_norm > clip ? float(clip / (st.grad_norm + 1e-6)) : 1.0f;
    for (int u : update_order) adamw(u, scale);
  }
  if (!carry) return;
  carried = std::min(slots.size(), forward.size());
  // They stay in flight between steps, where any MPI call of the caller's
  // (the stop flag, metrics I/O) may move their bytes into our buffers, as a
  // CUDA-aware MPI writes device memory: the communicator owns those buffers
  // until the next pass takes the gathers over (kernels/runtime/device_memory.hpp).
  carried_access = std::make_unique<DeviceAccess>();
}

}  // namespace zeropp
