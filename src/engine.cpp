#include "src/engine.hpp"

#include <cmath>
#include <cstring>

#include "kernels/norm.hpp"
#include "src/bf16.hpp"
#include "src/errors.hpp"
#include "src/optimizer.hpp"
#include "src/shard.hpp"

namespace zeropp {

namespace {

// This rank's share of one unit.
struct UnitShard {
  std::string name;
  int64_t numel = 0, padded = 0, slice = 0;
  Span mine;                 // [r·slice, (r+1)·slice) in padded coordinates
  Buf<float> master, grad, m, v;
  std::vector<DecaySegment> segments;
};

// A full-unit buffer: what arrives on the wire and its fp32 copy.
struct Slot {
  std::vector<uint8_t> send, wire;
  Buf<float> full;
  Request req;
  int unit = -1;
  bool in_flight = false;
};

}  // namespace

struct Engine::Impl {
  const Topology& topo;
  Communicator& comm;
  Group world;
  DType wire;
  std::vector<UnitShard> units;
  Slot slots[2];
  // the pass being run: which unit each position acquires, and where
  Pass pass = Pass::Forward;
  std::vector<int> schedule;
  size_t pos = 0;
  int slot_of_pos0 = 0;
  // full weights still valid in a slot after the forward (the tied
  // embeddings end the forward and start the backward): no second gather
  int resident_unit = -1, resident_slot = -1;
  // full-size gradient buffers: the embeddings' lives through the backward
  Buf<float> grad_emb, grad_cur;
  std::vector<bool> grad_live;
  std::vector<float> reduced;  // this rank's slice of a reduced gradient
  Buf<int32_t> inputs, targets;

  Impl(const Topology& t, Communicator& c, DType w) : topo(t), comm(c), world(Group::world(t)), wire(w) {}

  int slot_for(size_t position) const { return int((size_t(slot_of_pos0) + position) % 2); }

  void start_gather(size_t position) {
    const int u = schedule[position];
    Slot& s = slots[slot_for(position)];
    const UnitShard& us = units[size_t(u)];
    const int64_t n = us.slice;
    const void* send = us.master.data();
    if (wire == DType::BF16) {
      fp32_to_bf16(us.master.data(), reinterpret_cast<uint16_t*>(s.send.data()), n);
      send = s.send.data();
    }
    void* recv = wire == DType::F32 ? static_cast<void*>(s.full.data()) : s.wire.data();
    s.req = comm.start_allgather(world, send, recv, n, wire,
                                 pass == Pass::Forward ? Purpose::FwdGather : Purpose::BwdGather, us.name);
    s.unit = u;
    s.in_flight = true;
  }

  void begin_pass(Pass p, const std::vector<int>& sched) {
    pass = p;
    schedule = sched;
    pos = 0;
    if (p == Pass::Backward && resident_unit == sched.front()) {
      slot_of_pos0 = resident_slot;  // already gathered: the forward's last unit
    } else {
      slot_of_pos0 = 0;
      start_gather(0);
    }
    resident_unit = -1;
    std::fill(grad_live.begin(), grad_live.end(), false);
  }

  CVec<float> acquire(int u) {
    if (pos >= schedule.size() || schedule[pos] != u)
      fatal("Engine::acquire", __FILE__, __LINE__,
            "unit " + std::to_string(u) + " acquired out of the model's schedule");
    Slot& s = slots[slot_for(pos)];
    if (s.in_flight) {
      comm.wait(s.req);
      s.in_flight = false;
      if (wire == DType::BF16)
        bf16_to_fp32(reinterpret_cast<const uint16_t*>(s.wire.data()), s.full.data(), units[size_t(u)].padded);
    }
    if (pos + 1 < schedule.size()) start_gather(pos + 1);  // prefetch into the other slot
    return CVec<float>(s.full.data(), units[size_t(u)].numel);
  }

  // MPI progresses our ring only inside MPI calls: poke the prefetch at
  // every unit boundary so its hops advance while the model computes.
  void progress() {
    for (Slot& s : slots)
      if (s.in_flight) comm.test(s.req);
  }

  void release(int u) {
    progress();
    if (pass == Pass::Forward && pos + 1 == schedule.size()) {
      resident_unit = u;
      resident_slot = slot_for(pos);
    }
    ++pos;
  }

  Vec<float> grad(int u) {
    Buf<float>& g = u == 0 ? grad_emb : grad_cur;
    const int64_t n = units[size_t(u)].padded;
    Vec<float> v(g.data(), n);
    if (!grad_live[size_t(u)]) {
      Kokkos::deep_copy(v, 0.0f);
      grad_live[size_t(u)] = true;
    }
    return Vec<float>(g.data(), units[size_t(u)].numel);
  }

  void grad_done(int u) {
    progress();
    UnitShard& us = units[size_t(u)];
    const Buf<float>& g = u == 0 ? grad_emb : grad_cur;
    comm.reduce_scatter(world, g.data(), reduced.data(), us.slice, wire, Purpose::GradReduce, us.name);
    const float inv_p = 1.0f / float(topo.P);
    float* dst = us.grad.data();
    for (int64_t i = 0; i < us.slice; ++i) dst[i] += reduced[size_t(i)] * inv_p;
    grad_live[size_t(u)] = false;
  }
};

Engine::Engine(const Config& cfg, const Topology& topo, Communicator& comm, GPT<float>& model)
    : cfg_(cfg), model_(model),
      impl_(std::make_unique<Impl>(topo, comm, cfg.zero.comm_dtype == "bf16" ? DType::BF16 : DType::F32)) {
  auto& I = *impl_;
  const ParamLayout& layout = model.layout();
  int64_t max_padded = 0, max_block = 0;
  for (size_t u = 0; u < layout.units.size(); ++u) {
    const UnitSpec& spec = layout.units[u];
    UnitShard s;
    s.name = spec.name;
    s.numel = spec.numel;
    s.padded = padded_size(spec.numel, topo.P);
    s.slice = slice_size(spec.numel, topo.P);
    s.mine = slice_span(spec.numel, topo.P, topo.rank);
    for (Buf<float>* b : {&s.master, &s.grad, &s.m, &s.v}) *b = Buf<float>(spec.name, size_t(s.slice));
    s.segments = decay_segments(spec, s.mine.begin, s.mine.end);
    max_padded = std::max(max_padded, s.padded);
    if (u != 0) max_block = std::max(max_block, s.padded);
    I.units.push_back(std::move(s));
  }
  for (Slot& s : I.slots) {
    s.full = Buf<float>("gathered unit", size_t(max_padded));
    if (I.wire != DType::F32) {
      s.send.resize(size_t(bytes_of(I.wire, max_padded / topo.P)));
      s.wire.resize(size_t(bytes_of(I.wire, max_padded)));
    }
  }
  I.grad_emb = Buf<float>("embeddings grad", size_t(I.units[0].padded));
  I.grad_cur = Buf<float>("unit grad", size_t(max_block));
  I.grad_live.assign(I.units.size(), false);
  I.reduced.resize(size_t(max_padded / topo.P));
  const int64_t bt = int64_t(cfg.train.batch_size) * cfg.train.seq_len;
  I.inputs = Buf<int32_t>("inputs", size_t(bt));
  I.targets = Buf<int32_t>("targets", size_t(bt));
}

Engine::~Engine() = default;

void Engine::init_weights(uint64_t seed) {
  for (size_t u = 0; u < impl_->units.size(); ++u) {
    UnitShard& s = impl_->units[u];
    GPT<float>::init_unit(model_.layout(), int(u), seed, s.mine.begin, s.mine.end, s.master.data());
    Kokkos::deep_copy(s.m, 0.0f);
    Kokkos::deep_copy(s.v, 0.0f);
    Kokkos::deep_copy(s.grad, 0.0f);
  }
  impl_->resident_unit = -1;
}

CVec<float> Engine::acquire(int unit) { return impl_->acquire(unit); }
void Engine::release(int unit) { impl_->release(unit); }
Vec<float> Engine::grad(int unit) { return impl_->grad(unit); }
void Engine::grad_done(int unit) { impl_->grad_done(unit); }

StepStats Engine::train_step(int64_t step, const DataLoader& loader, double lr) {
  auto& I = *impl_;
  I.comm.set_step(step);
  I.comm.counters().reset();
  for (auto& s : I.units) Kokkos::deep_copy(s.grad, 0.0f);
  const int A = cfg_.train.grad_accum, B = cfg_.train.batch_size, T = cfg_.train.seq_len;
  const int64_t bt = int64_t(B) * T;
  auto in_h = Kokkos::create_mirror_view(I.inputs);
  auto tg_h = Kokkos::create_mirror_view(I.targets);
  double sums[3] = {0, 0, 0};  // loss, squared gradient norm, cross-node bytes
  for (int m = 0; m < A; ++m) {
    loader.batch(step, m, in_h.data(), tg_h.data());
    Kokkos::deep_copy(I.inputs, in_h);
    Kokkos::deep_copy(I.targets, tg_h);
    I.begin_pass(Pass::Forward, model_.unit_schedule(Pass::Forward));
    sums[0] += model_.forward(CVec<int32_t>(I.inputs.data(), bt), CVec<int32_t>(I.targets.data(), bt), B, T, *this);
    I.begin_pass(Pass::Backward, model_.unit_schedule(Pass::Backward));
    model_.backward(1.0f / float(bt * A), *this);
  }
  sums[0] /= A;
  for (auto& s : I.units) sums[1] += sum_squares<float>(CVec<float>(s.grad.data(), s.slice), s.slice);
  sums[2] = double(I.comm.counters().total().inter);
  I.comm.allreduce_sum(I.world, sums, 3, Purpose::Other, "loss+norm+bytes");
  StepStats st;
  st.loss = sums[0] / I.topo.P;
  st.grad_norm = std::sqrt(sums[1]);
  st.inter_node_bytes_all = sums[2];
  const double clip = cfg_.optim.grad_clip;
  const float scale = clip > 0 && st.grad_norm > clip ? float(clip / (st.grad_norm + 1e-6)) : 1.0f;
  for (auto& s : I.units)
    adamw_shard(s.master, s.m, s.v, s.grad, s.segments, s.mine.begin, cfg_.optim, lr, int(step + 1), scale);
  I.resident_unit = -1;  // the weights changed
  st.bytes = I.comm.counters();
  return st;
}

double Engine::eval_loss(const DataLoader& val, int batches) {
  auto& I = *impl_;
  const int B = cfg_.train.batch_size, T = cfg_.train.seq_len;
  const int64_t bt = int64_t(B) * T;
  auto in_h = Kokkos::create_mirror_view(I.inputs);
  auto tg_h = Kokkos::create_mirror_view(I.targets);
  double sum = 0;
  for (int i = 0; i < batches; ++i) {
    val.batch(i, 0, in_h.data(), tg_h.data());
    Kokkos::deep_copy(I.inputs, in_h);
    Kokkos::deep_copy(I.targets, tg_h);
    I.begin_pass(Pass::Forward, model_.unit_schedule(Pass::Forward));
    sum += model_.forward(CVec<int32_t>(I.inputs.data(), bt), CVec<int32_t>(I.targets.data(), bt), B, T, *this);
  }
  I.resident_unit = -1;
  I.comm.allreduce_sum(I.world, &sum, 1, Purpose::Other, "val loss");
  return sum / double(batches) / I.topo.P;
}

std::vector<float> Engine::next_token_probs(const std::vector<int32_t>& context) {
  auto& I = *impl_;
  const int Tn = int(context.size()), V = model_.config().vocab_size;
  auto in_h = Kokkos::create_mirror_view(I.inputs);
  std::copy(context.begin(), context.end(), in_h.data());
  Kokkos::deep_copy(I.inputs, in_h);
  I.begin_pass(Pass::Forward, model_.unit_schedule(Pass::Forward));
  model_.forward(CVec<int32_t>(I.inputs.data(), Tn), CVec<int32_t>(), 1, Tn, *this);
  I.resident_unit = -1;
  const CVec<float> p = model_.probs();
  const CVec<float> last(p.data() + int64_t(Tn - 1) * V, V);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), last);
  return std::vector<float>(h.data(), h.data() + V);
}

std::vector<float> Engine::gather_master(int unit) {
  auto& I = *impl_;
  const UnitShard& s = I.units[size_t(unit)];
  std::vector<float> full(size_t(s.padded));
  I.comm.allgather(I.world, s.master.data(), full.data(), s.slice, DType::F32, Purpose::Other, s.name);
  full.resize(size_t(s.numel));
  return full;
}

MemoryReport Engine::memory() const {
  const auto& I = *impl_;
  MemoryReport r;
  for (const auto& s : I.units) {
    r.master += 4 * s.slice;
    r.grad += 4 * s.slice;
    r.adam += 8 * s.slice;
  }
  for (const auto& s : I.slots) r.gather += int64_t(4 * s.full.size() + s.wire.size() + s.send.size());
  r.grad_full = int64_t(4 * (I.grad_emb.size() + I.grad_cur.size()));
  return r;
}

}  // namespace zeropp
