#include <algorithm>

#include "kernels/ops/convert.hpp"
#include "src/base/errors.hpp"
#include "src/zero/engine_impl.hpp"

namespace zeropp {

void Engine::Impl::start_gather(size_t position) {
  const int u = schedule[position];
  Slot& s = slots[slot_for(position)];
  UnitShard& us = units[size_t(u)];
  const Purpose purpose = pass == Pass::Forward ? Purpose::FwdGather : Purpose::BwdGather;
  s.unit = u;
  s.in_flight = true;
  if (hpz && us.secondary_valid) {  // inside the hpZ group, from the secondaries
    s.route = Route::Group;
    void* recv = wire == DType::F32 ? static_cast<void*>(s.full.data()) : s.wire.data();
    s.req = with_device_access([&] {
      return comm.start_allgather(*hpz, us.secondary.data(), recv, us.padded / alpha, wire, purpose, us.name);
    });
    return;
  }
  if (z.quantized_weights && (pass == Pass::Forward || z.quantized_weights_backward)) {  // qwZ
    s.route = Route::Quantized;
    const int64_t n = us.slice, bytes = quant_chunk(n);
    uint8_t* out = s.wire.data() + topo.rank * bytes;  // in place: the gather copies nothing of ours
    weight_scheme(z).quantize_packed(us.master.data(), out, n);
    s.req = with_device_access(
        [&] { return comm.start_allgather(world, out, s.wire.data(), bytes, DType::I8, purpose, us.name); });
    return;
  }
  s.route = wire == DType::BF16 && topo.P == 1 ? Route::Local : Route::World;
  const void* send = us.master.data();
  if (wire == DType::BF16) {  // cast into our own place on the wire: the gather copies nothing of ours
    const Vec<uint16_t> mine(bf16_view(s.wire).data() + topo.rank * us.slice, us.slice);
    if (s.route == Route::World) to_bf16(us.master.view(), mine, us.slice);  // Local: decode() rounds
    send = mine.data();
  }
  void* recv = wire == DType::F32 ? static_cast<void*>(s.full.data()) : s.wire.data();
  s.req = with_device_access(
      [&] { return comm.start_allgather(world, send, recv, us.slice, wire, purpose, us.name); });
}

// Turns what arrived in slot s into fp32 weights in s.full.
void Engine::Impl::decode(Slot& s) {
  const UnitShard& us = units[size_t(s.unit)];
  if (s.route == Route::Quantized) {
    const int64_t n = us.slice, bytes = quant_chunk(n);
    const QuantScheme q = weight_scheme(z);
    // Rounded to the wire dtype, so that the hpZ secondaries (kept in it)
    // hold exactly these weights: every route then hands the model the same.
    for (int r = 0; r < topo.P; ++r) {
      const uint8_t* chunk = s.wire.data() + r * bytes;
      float* x = s.full.data() + r * n;
      wire == DType::BF16 ? q.dequantize_packed_bf16(chunk, x, n) : q.dequantize_packed(chunk, x, n);
    }
  } else if (s.route == Route::Local) {
    // P = 1: bf16(master) straight into the fp32 unit, one pass instead of a
    // cast onto the wire at the start and a widening here. It reads the
    // master at the wait instead of at the start, which gives the same bits
    // because no master changes in between: AdamW (update()) runs after
    // every gather of the backward is decoded, and the next step's gathers
    // it starts early (start_carried) start after their unit's update, which
    // is that unit's last until the next step's backward; init_weights and
    // checkpoint loads (checkpoint_shards) drop them (drop_carried) before
    // writing. The resident unit is not decoded again; hpZ needs P > 1; qwZ
    // takes Route::Quantized.
    round_to_bf16(us.master.view(), s.full.view(), us.slice);  // slice = padded at P = 1
  } else if (wire == DType::BF16) {
    from_bf16(bf16_view(s.wire), s.full.view(), us.padded);
  }
}

// hpZ: keep this rank's part of the forward's full unit, in the comm dtype:
// exactly the weights the compute used (decode() made them representable).
void Engine::Impl::fill_secondary(UnitShard& us, const Slot& s) {
  const int64_t n = us.padded / alpha, off = int64_t(topo.rank % alpha) * n;
  if (wire == DType::BF16)
    to_bf16(s.full.view(off, n), bf16_view(us.secondary), n);
  else
    copy(Vec<float>(reinterpret_cast<float*>(us.secondary.data()), n), CVec<float>(s.full.view(off, n)));
  us.secondary_valid = true;
}

void Engine::Impl::invalidate_secondaries() {
  for (auto& us : units) us.secondary_valid = false;
  resident_unit = -1;
}

void Engine::Impl::start_carried(int u) {
  pass = Pass::Forward;
  schedule = forward;
  slot_of_pos0 = 0;
  comm.set_ahead(true);  // the next step's bytes
  for (size_t p = 0; p < std::min(slots.size(), forward.size()); ++p)
    if (forward[p] == u) start_gather(p);
  comm.set_ahead(false);
}

void Engine::Impl::drop_carried() {
  for (size_t p = 0; p < carried; ++p)
    if (slots[p].in_flight) {
      with_device_access([&] { comm.wait(slots[p].req); });
      slots[p].in_flight = false;
    }
  if (carried) comm.discard_ahead();  // no step uses what they sent
  carried = 0;
  carried_access.reset();
}

void Engine::Impl::begin_pass(Pass p, const std::vector<int>& sched) {
  // the next forward's first gathers, started at the end of the last step
  const bool adopt = carried > 0 && training && p == Pass::Forward && sched.size() >= carried &&
                     std::equal(forward.begin(), forward.begin() + std::ptrdiff_t(carried), sched.begin());
  if (!adopt) drop_carried();
  pass = p;
  schedule = sched;
  pos = 0;
  if (adopt) {
    slot_of_pos0 = 0;
    next_start = carried;
    carried = 0;
    carried_access.reset();  // the pass's own waits open access from here
  } else if (p == Pass::Backward && resident_unit == sched.front()) {
    slot_of_pos0 = resident_slot;  // already gathered: the forward's last unit
    next_start = 1;
  } else {
    slot_of_pos0 = 0;
    next_start = 0;
  }
  resident_unit = -1;
  std::fill(grad_live.begin(), grad_live.end(), false);
}

// MPI progresses our rings only inside MPI calls: poke the prefetches and
// the gradient reduction at every unit boundary (and, with overlap, between
// kernels) so that their hops advance while the model computes.
void Engine::Impl::progress() {
  for (Slot& s : slots)
    if (s.in_flight) with_device_access([&] { return comm.test(s.req); });
  if (pending.unit < 0) return;
  if (qgz)
    qgz->test();
  else
    with_device_access([&] { return comm.test(pending.req); });
}

// Starts the gathers of positions up to `last` (clamped to the pass).
void Engine::Impl::start_through(size_t last) {
  for (; next_start <= last && next_start < schedule.size(); ++next_start) start_gather(next_start);
}

CVec<float> Engine::Impl::acquire(int u) {
  if (pos >= schedule.size() || schedule[pos] != u)
    fatal("Engine::acquire", __FILE__, __LINE__,
          "unit " + std::to_string(u) + " acquired out of the model's schedule");
  Slot& s = slots[slot_for(pos)];
  UnitShard& us = units[size_t(u)];
  start_through(pos);  // prefetch_depth 0: gathered now
  if (s.in_flight) {
    with_device_access([&] { comm.wait(s.req); });
    s.in_flight = false;
    decode(s);
    if (hpz && pass == Pass::Forward && !us.secondary_valid) fill_secondary(us, s);
  }
  start_through(pos + slots.size() - 1);                                  // prefetch into the other slots
  if (watch) watch(pass, u, to_host(s.full, us.numel).data(), us.numel);  // tests: a host copy
  return CVec<float>(s.full.data(), us.numel);
}

void Engine::Impl::release(int u) {
  progress();
  if (pass == Pass::Forward && pos + 1 == schedule.size()) {
    resident_unit = u;
    resident_slot = slot_for(pos);
  }
  ++pos;
}

}  // namespace zeropp
