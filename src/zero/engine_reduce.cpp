#include "kernels/ops/accumulate.hpp"
#include "kernels/ops/buffer_ops.hpp"
#include "src/zero/engine_impl.hpp"

namespace zeropp {

Vec<float> Engine::Impl::grad(int u) {
  const int64_t n = units[size_t(u)].padded;
  if (!grad_live[size_t(u)]) {
    Buffer<float>* g = &grad_shared[size_t(u)];
    if (!g->size()) {
      g = &grad_cur[next_cur];
      next_cur = (next_cur + 1) % grad_cur.size();
    }
    if (pending.in == g) finish_reduce();  // still being reduced: not yet free
    fill(g->view(0, n), 0.0f);
    grad_of[size_t(u)] = g;
    grad_live[size_t(u)] = true;
  }
  return Vec<float>(grad_of[size_t(u)]->data(), units[size_t(u)].numel);
}

// The reduction of the previous unit completes (it had this unit's backward
// to progress under), then this unit's starts; overlap off: it completes here.
void Engine::Impl::grad_done(int u) {
  progress();
  finish_reduce();
  UnitShard& us = units[size_t(u)];
  const Buffer<float>& g = *grad_of[size_t(u)];
  pending.unit = u;
  pending.in = &g;
  if (qgz)
    qgz->start(u, g.data(), reduced.data(), us.name);
  else
    pending.req = with_device_access([&] {
      return comm.start_reduce_scatter(world, g.data(), reduced.data(), us.slice, wire, Purpose::GradReduce,
                                       us.name);
    });
  grad_live[size_t(u)] = false;
  if (!z.overlap) finish_reduce();
}

// Completes the reduction in flight and adds its mean over ranks to the
// unit's gradient shard (in the order the reductions started: the same
// sums as reducing in place).
void Engine::Impl::finish_reduce() {
  if (pending.unit < 0) return;
  if (qgz)
    qgz->finish();
  else
    with_device_access([&] { comm.wait(pending.req); });
  UnitShard& us = units[size_t(pending.unit)];
  const float inv_p = 1.0f / float(topo.P);  // the mean over ranks
  accumulate_scaled(us.grad.view(), reduced.view(), inv_p, us.slice);
  pending.unit = -1;
  pending.in = nullptr;
}

}  // namespace zeropp
