#include "src/zero/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/ops/sum_squares.hpp"
#include "src/base/errors.hpp"
#include "src/zero/engine_impl.hpp"

namespace zeropp {

Engine::Engine(const Config& cfg, const Topology& topo, Communicator& comm, Model<float>& model, bool frozen)
    : cfg_(cfg), model_(model), impl_(std::make_unique<Impl>(topo, comm, cfg.zero)) {
  auto& I = *impl_;
  const ZeroConfig& z = cfg.zero;
  I.frozen = frozen;
  const ModelDescription& desc = model.describe();
  const StatePlan plan = plan_states(z, desc, topo.P, topo.X, frozen);
  I.alpha = plan.alpha;
  if (I.alpha > 1) I.hpz = std::make_unique<Group>(topo, topo.rank / I.alpha, topo.rank % I.alpha, "hpz");
  I.align = plan.align;
  for (size_t u = 0; u < desc.layout.units.size(); ++u) {
    const UnitSpec& spec = desc.layout.units[u];
    UnitShard s;
    s.name = spec.name;
    s.numel = spec.numel;
    s.padded = plan.padded[u];
    s.slice = plan.slice[u];
    s.mine = slice_span(spec.numel, topo.P, topo.rank, I.align);
    s.master = Buffer<float>(spec.name.c_str(), s.slice);
    if (!frozen)
      for (Buffer<float>* b : {&s.grad, &s.m, &s.v}) *b = Buffer<float>(spec.name.c_str(), s.slice);
    s.segments = decay_segments(spec, s.mine.begin, s.mine.end);
    if (I.hpz) s.secondary = Buffer<uint8_t>("hpZ secondary", plan.secondary[u]);
    I.units.push_back(std::move(s));
  }
  I.slots.resize(size_t(plan.slots));
  for (Slot& s : I.slots) {
    s.full = Buffer<float>("gathered unit", plan.slot_floats);
    s.wire = Buffer<uint8_t>("gather wire", plan.slot_wire);
  }
  I.grad_of.assign(I.units.size(), nullptr);
  I.grad_live.assign(I.units.size(), false);
  if (plan.qgz) I.qgz = std::make_unique<QgzReducer>(topo, comm, qgz_settings(z), plan.padded);
  I.grad_shared.resize(I.units.size());
  if (!frozen)
    for (int u : desc.shared_units)
      I.grad_shared[size_t(u)] = Buffer<float>("shared unit grad", plan.shared_grad[size_t(u)]);
  for (int k = 0; k < plan.unit_grads; ++k) I.grad_cur.emplace_back("unit grad", plan.unit_grad_floats);
  if (!frozen) I.reduced = Buffer<float>("reduced grad", plan.reduced_floats);
  const int64_t bt = int64_t(cfg.train.batch_size) * cfg.train.seq_len;
  I.inputs = Buffer<int32_t>("inputs", bt);
  I.targets = Buffer<int32_t>("targets", bt);
  I.forward = model.unit_schedule(Pass::Forward);
  for (int u : I.forward)
    if (std::find(I.update_order.begin(), I.update_order.end(), u) == I.update_order.end())
      I.update_order.push_back(u);
  for (int u = 0; u < int(I.units.size()); ++u)  // units no forward uses (none in our models)
    if (std::find(I.update_order.begin(), I.update_order.end(), u) == I.update_order.end())
      I.update_order.push_back(u);
  I.unit_norm2.assign(I.units.size(), 0.0);
  if (z.overlap)
    I.kernel_progress = std::make_unique<KernelProgress>([&I] {
      if (I.model_running) I.progress();
    });
}

Engine::~Engine() { impl_->drop_carried(); }  // gathers carried to a next step that never comes

int64_t Engine::align() const { return impl_->align; }
int64_t Engine::padded(int unit) const { return impl_->units[size_t(unit)].padded; }
int Engine::hpz_size() const { return impl_->alpha; }

void Engine::init_weights(uint64_t seed) {
  impl_->drop_carried();
  for (size_t u = 0; u < impl_->units.size(); ++u) {
    UnitShard& s = impl_->units[u];
    std::vector<float> w(static_cast<size_t>(s.slice));  // initialised on the host, then transferred
    model_.init_unit(int(u), seed, s.mine.begin, s.mine.end, w.data());
    copy_to_device(w.data(), s.master.view());
    for (Buffer<float>* b : {&s.m, &s.v, &s.grad}) fill(*b, 0.0f);
  }
  impl_->invalidate_secondaries();
}

// The model calls these between its kernels: engine work, not polled.
namespace {
template <class I, class F>
auto engine_work(I& impl, F f) {
  typename I::Computing c(impl, false);
  return f();
}
}  // namespace
CVec<float> Engine::acquire(int unit) {
  return engine_work(*impl_, [&] { return impl_->acquire(unit); });
}
void Engine::release(int unit) {
  engine_work(*impl_, [&] { impl_->release(unit); });
}
Vec<float> Engine::grad(int unit) {
  return engine_work(*impl_, [&] { return impl_->grad(unit); });
}
void Engine::grad_done(int unit) {
  engine_work(*impl_, [&] { impl_->grad_done(unit); });
}

double Engine::forward_batch(const MicroBatch& mb) {
  auto& I = *impl_;
  const int B = cfg_.train.batch_size, T = cfg_.train.seq_len;
  const int64_t bt = int64_t(B) * T;
  if (int64_t(mb.tokens.size()) != bt || int64_t(mb.targets.size()) != bt)
    fatal("Engine::forward_batch", __FILE__, __LINE__,
          "a micro-batch of " + std::to_string(mb.tokens.size()) + " tokens, " +
              std::to_string(mb.targets.size()) + " targets; expected B·T = " + std::to_string(bt));
  copy_to_device(mb.tokens.data(), I.inputs.view());
  copy_to_device(mb.targets.data(), I.targets.view());
  model_.set_loss_weights(mb.weights);
  I.begin_pass(Pass::Forward, model_.unit_schedule(Pass::Forward));
  Impl::Computing c(I, true);
  return model_.forward(CVec<int32_t>(I.inputs.data(), bt), CVec<int32_t>(I.targets.data(), bt), B, T, *this);
}

StepStats Engine::train_step(int64_t step, const std::vector<MicroBatch>& micro, double lr) {
  auto& I = *impl_;
  if (I.frozen)
    fatal("Engine::train_step", __FILE__, __LINE__,
          "a frozen engine (no gradients, no Adam moments) is never stepped");
  I.comm.set_step(step);
  I.comm.reset_counters();  // with the bytes of this step's gathers sent ahead
  I.training = true;
  // Validation and sampling between steps may have filled the secondaries:
  // every step starts from the same state, so that they never change training.
  I.invalidate_secondaries();
  if (I.qgz && step % cfg_.zero.error_feedback_reset == 0) I.qgz->reset_error_feedback();
  for (auto& s : I.units) fill(s.grad, 0.0f);
  const int A = int(micro.size());
  const int64_t bt = int64_t(cfg_.train.batch_size) * cfg_.train.seq_len;
  double loss = 0;
  for (int m = 0; m < A; ++m) {
    loss += forward_batch(micro[size_t(m)]);
    I.begin_pass(Pass::Backward, model_.unit_schedule(Pass::Backward));
    Impl::Computing c(I, true);
    model_.backward(1.0f / float(bt * A), *this);
  }
  StepStats st;
  I.update(st, loss / A, cfg_.optim, lr, step, step + 1 < cfg_.train.steps);
  st.bytes = I.comm.counters_now();
  I.training = false;
  return st;
}

double Engine::eval_loss(const std::vector<MicroBatch>& batches) {
  auto& I = *impl_;
  double sum = 0;
  model_.set_backward_follows(false);  // losses only: the model skips the LM head's backward
  for (const MicroBatch& mb : batches) sum += forward_batch(mb);
  model_.set_backward_follows(true);
  I.resident_unit = -1;
  I.comm.allreduce_sum(I.world, &sum, 1, Purpose::Other, "val loss");
  return sum / double(batches.size()) / I.topo.P;
}

CVec<float> Engine::token_losses(const MicroBatch& mb) {
  model_.set_backward_follows(false);  // as eval_loss: no head backward
  forward_batch(mb);
  model_.set_backward_follows(true);
  impl_->resident_unit = -1;
  return model_.token_losses();
}

void Engine::inference_pass(const std::function<void(UnitSource<float>&)>& f) {
  auto& I = *impl_;
  I.begin_pass(Pass::Forward, model_.unit_schedule(Pass::Forward));
  f(*this);
  I.resident_unit = -1;
}

CVec<float> Engine::probs(const std::vector<int32_t>& tokens, int B, int Tn) {
  auto& I = *impl_;
  const int64_t bt = int64_t(B) * Tn;
  if (B > cfg_.train.batch_size || Tn > cfg_.train.seq_len || int64_t(tokens.size()) != bt)
    fatal("Engine::probs", __FILE__, __LINE__,
          std::to_string(tokens.size()) + " tokens as B = " + std::to_string(B) +
              " by Tn = " + std::to_string(Tn) + " (at most " + std::to_string(cfg_.train.batch_size) +
              " by " + std::to_string(cfg_.train.seq_len) + ")");
  copy_to_device(tokens.data(), I.inputs.view(0, bt));
  inference_pass([&](UnitSource<float>& src) {
    model_.forward(CVec<int32_t>(I.inputs.data(), bt), CVec<int32_t>(), B, Tn, src);
  });
  return model_.probs();
}

namespace {
std::vector<float> gather_full(Communicator& comm, Group& world, const UnitShard& s,
                               const Buffer<float>& shard) {
  std::vector<float> full(static_cast<size_t>(s.padded));
  with_device_access(
      [&] { comm.allgather(world, shard.data(), full.data(), s.slice, DType::F32, Purpose::Other, s.name); });
  full.resize(size_t(s.numel));
  return full;
}
}  // namespace

std::vector<float> Engine::gather_master(int unit) {
  const UnitShard& s = impl_->units[size_t(unit)];
  return gather_full(impl_->comm, impl_->world, s, s.master);
}

std::vector<float> Engine::gather_grad(int unit) {
  if (impl_->frozen) fatal("Engine::gather_grad", __FILE__, __LINE__, "a frozen engine has no gradient");
  const UnitShard& s = impl_->units[size_t(unit)];
  return gather_full(impl_->comm, impl_->world, s, s.grad);
}

void Engine::watch_weights(WeightWatcher w) { impl_->watch = std::move(w); }

ShardGroups Engine::checkpoint_shards(bool with_error_feedback) {
  auto& I = *impl_;
  I.drop_carried();  // a load writes the master shards that gathers in flight may read
  ShardGroups g = {{"model", {}}, {"optimizer/exp_avg", {}}, {"optimizer/exp_avg_sq", {}}};
  const auto& layout = model_.layout();
  for (size_t u = 0; u < I.units.size(); ++u) {
    UnitShard& us = I.units[u];
    // every tensor appears on every rank (the collective write needs all), with
    // this rank's piece or an empty range
    const auto pieces = params_in(layout.units[u], us.mine.begin, us.mine.end);
    for (const ParamSpec& p : layout.units[u].params) {
      TensorShard t{p.name, p.shape, 0, 0, nullptr};
      for (const ParamPiece& piece : pieces)
        if (piece.param == &p) {
          t.begin = piece.begin();
          t.end = piece.end();
        }
      const int64_t at = t.begin + p.offset - us.mine.begin;  // offset in the shard
      Buffer<float>* bufs[3] = {&us.master, &us.m, &us.v};
      for (int k = 0; k < 3; ++k) {
        TensorShard s = t;
        s.data = t.end > t.begin && bufs[k]->size() > 0 ? bufs[k]->data() + at : nullptr;
        g[size_t(k)].second.push_back(s);
      }
    }
  }
  if (with_error_feedback && I.qgz && I.qgz->has_error_feedback()) {
    std::vector<TensorShard> ef;
    const int64_t P = I.topo.P, r = I.topo.rank;
    for (size_t u = 0; u < I.units.size(); ++u)
      for (int hop = 1; hop <= 2; ++hop) {
        const Buffer<float>& e = hop == 1 ? I.qgz->hop1_error(int(u)) : I.qgz->hop2_error(int(u));
        const int64_t n = int64_t(e.size());
        ef.push_back(
            {"hop" + std::to_string(hop) + "." + I.units[u].name, {P, n}, r * n, (r + 1) * n, e.data()});
      }
    g.emplace_back("error_feedback", std::move(ef));
  }
  return g;
}

std::string Engine::error_feedback_layout() const {
  return zeropp::error_feedback_layout(cfg_.zero, impl_->topo.P, impl_->topo.X);
}

void Engine::weights_loaded() {
  impl_->drop_carried();  // gathered from the old weights
  impl_->invalidate_secondaries();
}

std::unique_ptr<InferenceWeights> Engine::inference_weights() {
  std::vector<ShardedUnit> units;
  for (const UnitShard& s : impl_->units)
    units.push_back({s.name, s.numel, s.padded, s.slice, s.master.data()});
  return std::make_unique<InferenceWeights>(cfg_.zero, impl_->topo, impl_->comm, std::move(units),
                                            model_.unit_schedule(Pass::Forward));
}

MemoryReport Engine::memory() const {
  const auto& I = *impl_;
  MemoryReport r;
  for (const auto& s : I.units) {
    r.master += s.master.bytes();
    r.grad += s.grad.bytes();
    r.adam += s.m.bytes() + s.v.bytes();
    r.secondary += s.secondary.bytes();
  }
  for (const auto& s : I.slots) r.gather += s.full.bytes() + s.wire.bytes();
  r.grad_full = 0;
  for (const auto& g : I.grad_cur) r.grad_full += g.bytes();
  for (const auto& g : I.grad_shared) r.grad_full += g.bytes();
  r.grad_full += I.reduced.bytes();
  r.qgz = I.qgz ? I.qgz->memory_bytes() : 0;
  return r;
}

std::vector<float> Engine::grad_shard(int unit) const { return to_host(impl_->units[size_t(unit)].grad); }

std::vector<float> Engine::gathered(int unit, Pass pass) {
  auto& I = *impl_;
  I.resident_unit = -1;  // a real gather, not the forward's leftover
  I.begin_pass(pass, {unit});
  const CVec<float> w = I.acquire(unit);
  std::vector<float> out(w.size());
  copy_to_host(w, out.data());
  I.release(unit);
  I.resident_unit = -1;
  return out;
}

}  // namespace zeropp
