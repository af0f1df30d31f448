#include "src/zero/inference_weights.hpp"

#include <algorithm>

#include "kernels/ops/convert.hpp"
#include "src/base/errors.hpp"
#include "src/zero/zero_layout.hpp"

namespace zeropp {

InferenceRoute inference_route(WeightSource source) {
  switch (source) {
    case WeightSource::Zero3:
      return {false, 0};
    case WeightSource::Full:
      return {false, 0, true};
    case WeightSource::Hpz:
      return {true, 0};
    case WeightSource::Int8:
      return {false, 8};
    case WeightSource::Int4:
      return {false, 4};
    case WeightSource::HpzInt8:
      return {true, 8};
    case WeightSource::HpzInt4:
      return {true, 4};
  }
  throw Error("zero.inference_weights: a value without a route");
}

namespace {
// n elements rounded up to whole blocks.
int64_t quant_block_elems(int64_t n, int64_t block) { return (n + block - 1) / block * block; }
Vec<uint16_t> bf16_view(const Buffer<uint8_t>& b) {
  return Vec<uint16_t>(reinterpret_cast<uint16_t*>(b.data()), b.size() / 2);
}
// n bytes from `from` to `to` (both the backend's memory).
void copy_raw(const uint8_t* from, uint8_t* to, int64_t n) {
  copy(Vec<uint8_t>(to, n), CVec<uint8_t>(from, n));
}
}  // namespace

InferenceWeights::InferenceWeights(const ZeroConfig& z, const Topology& topo, Communicator& comm,
                                   std::vector<ShardedUnit> units, std::vector<int> schedule)
    : topo_(topo),
      comm_(comm),
      route_(inference_route(z.inference_weights)),
      name_(deck_name(z.inference_weights)),
      wire_(wire_dtype(z)),
      q_{route_.bits == 0 ? 8 : route_.bits, z.weight_block, ScaleDType::F32},
      world_(Group::world(topo)),
      units_(std::move(units)),
      schedule_(std::move(schedule)) {
  std::vector<int64_t> padded;
  for (const ShardedUnit& u : units_) padded.push_back(u.padded);
  const InferencePlan plan = plan_inference_weights(z, padded, topo.P, topo.X);
  alpha_ = plan.alpha;
  if (route_.group)
    group_ = std::make_unique<Group>(topo, topo.rank / alpha_, topo.rank % alpha_, "inference hpz");
  for (int64_t held : plan.held) copy_.emplace_back("inference copy", held);
  for (Slot& s : slots_) {
    s.full = Buffer<float>("inference unit", plan.full_floats);
    s.send = Buffer<uint8_t>("inference send", plan.send);
    s.wire = Buffer<uint8_t>("inference wire", plan.wire);
  }
  stage_ = Buffer<float>("inference stage", plan.stage_floats);
}

InferencePlan plan_inference_weights(const ZeroConfig& z, const std::vector<int64_t>& padded, int P, int X) {
  const InferenceRoute route = inference_route(z.inference_weights);
  const DType wire = wire_dtype(z);
  const QuantScheme q{route.bits == 0 ? 8 : route.bits, z.weight_block, ScaleDType::F32};
  InferencePlan p;
  if (route.group) p.alpha = inference_group_size(z, P, X);
  for (int64_t n : padded) {
    const int64_t slice = n / P;
    int64_t held = 0;
    if (route.bits) {  // one rank's slice in whole blocks, packed with its scales
      const int64_t elems = quant_block_elems(slice, q.block), chunk = q.packed_bytes(elems);
      held = chunk * (P / p.alpha);
      p.send = std::max(p.send, chunk);
      if (route.group) p.wire = std::max(p.wire, chunk * P);
      p.stage_floats = std::max(p.stage_floats, elems * P);
    } else {
      if (route.group) held = bytes_of(wire, n / p.alpha);
      if (route.full) held = n * int64_t(sizeof(float));
      if (wire == DType::BF16) {
        p.send = std::max(p.send, bytes_of(wire, slice));
        p.wire = std::max(p.wire, bytes_of(wire, n));
      }
    }
    p.full_floats = std::max(p.full_floats, n);
    p.held.push_back(held);
  }
  return p;
}

int64_t InferencePlan::bytes() const {
  int64_t b = 4 * stage_floats + kSlots * (4 * full_floats + send + wire);
  for (int64_t h : held) b += h;
  return b;
}

InferenceWeights::~InferenceWeights() = default;

int64_t InferenceWeights::quant_elems(const ShardedUnit& u) const {
  return quant_block_elems(u.slice, q_.block);
}

int64_t InferenceWeights::copy_bytes() const {
  int64_t b = 0;
  for (const auto& c : copy_) b += c.bytes();
  return b;
}

int64_t InferenceWeights::buffer_bytes() const {
  int64_t b = stage_.bytes();
  for (const Slot& s : slots_) b += s.full.bytes() + s.send.bytes() + s.wire.bytes();
  return b;
}

void InferenceWeights::refresh() {
  for (Slot& s : slots_)  // a pass left unfinished: its gathers complete first, on every rank
    if (s.in_flight) with_device_access([&] { comm_.wait(s.req); });
  pos_ = 0;
  if (!route_.group && !route_.bits && !route_.full) return;  // zero3: nothing kept
  Slot& s = slots_[0];
  const int P = topo_.P;
  const int64_t part = route_.group ? topo_.rank % alpha_ : 0;  // this rank's part of its group's copy
  for (size_t u = 0; u < units_.size(); ++u) {
    const ShardedUnit& us = units_[u];
    if (route_.bits) {  // quantized all-gather of every rank's slice, padded to whole blocks
      const int64_t n = quant_elems(us), chunk = q_.packed_bytes(n);
      copy(stage_.view(0, us.slice), CVec<float>(us.master, us.slice));
      fill(stage_.view(us.slice, n - us.slice), 0.0f);
      q_.quantize_packed(stage_.data(), s.send.data(), n);
      uint8_t* recv = route_.group ? s.wire.data() : copy_[u].data();
      with_device_access(
          [&] { comm_.allgather(world_, s.send.data(), recv, chunk, DType::I8, Purpose::Other, us.name); });
      const int64_t k = P / alpha_;  // world slices per group member
      if (route_.group) copy_raw(recv + part * k * chunk, copy_[u].data(), k * chunk);
      continue;
    }
    // hpZ: the unit in the comm dtype, of which this rank keeps its part (full: all of it, as fp32)
    const void* send = us.master;
    if (wire_ == DType::BF16) {
      to_bf16(CVec<float>(us.master, us.slice), bf16_view(s.send), us.slice);
      send = s.send.data();
    }
    auto* recv = wire_ == DType::F32 ? reinterpret_cast<uint8_t*>(s.full.data()) : s.wire.data();
    with_device_access(
        [&] { comm_.allgather(world_, send, recv, us.slice, wire_, Purpose::Other, us.name); });
    if (route_.full) {
      const Vec<float> out(reinterpret_cast<float*>(copy_[u].data()), us.padded);
      if (wire_ == DType::BF16)
        from_bf16(bf16_view(s.wire), out, us.padded);
      else
        copy(out, CVec<float>(s.full.view(0, us.padded)));
      continue;
    }
    const int64_t bytes = bytes_of(wire_, us.padded / alpha_);
    copy_raw(recv + part * bytes, copy_[u].data(), bytes);
  }
}

void InferenceWeights::start(Slot& s, int unit) {
  s.unit = unit;
  const ShardedUnit& us = units_[size_t(unit)];
  if (route_.bits && !route_.group) return;  // a local copy: nothing to send
  s.in_flight = true;
  if (route_.bits) {  // the group's quantized chunks
    const int64_t bytes = copy_[size_t(unit)].bytes();
    s.req = with_device_access([&] {
      return comm_.start_allgather(*group_, copy_[size_t(unit)].data(), s.wire.data(), bytes, DType::I8,
                                   Purpose::FwdGather, us.name);
    });
    return;
  }
  void* recv = wire_ == DType::F32 ? static_cast<void*>(s.full.data()) : s.wire.data();
  if (route_.group) {
    s.req = with_device_access([&] {
      return comm_.start_allgather(*group_, copy_[size_t(unit)].data(), recv, us.padded / alpha_, wire_,
                                   Purpose::FwdGather, us.name);
    });
    return;
  }
  const void* send = us.master;
  if (wire_ == DType::BF16) {
    to_bf16(CVec<float>(us.master, us.slice), bf16_view(s.send), us.slice);
    send = s.send.data();
  }
  s.req = with_device_access([&] {
    return comm_.start_allgather(world_, send, recv, us.slice, wire_, Purpose::FwdGather, us.name);
  });
}

void InferenceWeights::dequantize_all(const uint8_t* chunks, Slot& s) {
  const ShardedUnit& us = units_[size_t(s.unit)];
  const int64_t n = quant_elems(us), chunk = q_.packed_bytes(n);
  for (int r = 0; r < topo_.P; ++r) q_.dequantize_packed(chunks + r * chunk, stage_.data() + r * n, n);
  for (int r = 0; r < topo_.P; ++r)  // drop each slice's block padding
    copy(s.full.view(r * us.slice, us.slice), CVec<float>(stage_.view(r * n, us.slice)));
}

void InferenceWeights::finish(Slot& s) {
  if (s.in_flight) {
    with_device_access([&] { comm_.wait(s.req); });
    s.in_flight = false;
  }
  if (route_.bits)
    dequantize_all(route_.group ? s.wire.data() : copy_[size_t(s.unit)].data(), s);
  else if (wire_ == DType::BF16)
    from_bf16(bf16_view(s.wire), s.full.view(), units_[size_t(s.unit)].padded);
}

CVec<float> InferenceWeights::acquire(int unit) {
  if (schedule_[pos_] != unit)
    fatal("InferenceWeights::acquire", __FILE__, __LINE__,
          "unit " + std::to_string(unit) + " acquired out of the model's forward schedule");
  if (route_.full)
    return CVec<float>(reinterpret_cast<const float*>(copy_[size_t(unit)].data()),
                       units_[size_t(unit)].numel);
  Slot& s = slot(pos_);
  if (pos_ == 0) start(s, unit);  // a pass begins: nothing was prefetched
  finish(s);
  if (pos_ + 1 < schedule_.size()) start(slot(pos_ + 1), schedule_[pos_ + 1]);
  return CVec<float>(s.full.data(), units_[size_t(unit)].numel);
}

void InferenceWeights::release(int unit) {
  // MPI progresses the prefetch only inside MPI calls: poke it at every unit boundary
  Slot& next = slot(pos_ + 1);  // (full: never in flight)
  if (next.in_flight) with_device_access([&] { return comm_.test(next.req); });
  (void)unit;
  pos_ = (pos_ + 1) % schedule_.size();
}

Vec<float> InferenceWeights::grad(int unit) {
  fatal("InferenceWeights::grad", __FILE__, __LINE__,
        "unit " + std::to_string(unit) + ": inference weights have no gradient");
}

void InferenceWeights::grad_done(int unit) { grad(unit); }

}  // namespace zeropp
