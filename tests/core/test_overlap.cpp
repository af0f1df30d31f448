// Overlap (zero.overlap, zero.prefetch_depth): the nonblocking gradient
// reduction and deeper prefetch change when collectives run, never what they
// compute: losses, norms, gradients and weights are bitwise those of the
// blocking path (no prefetch, reductions completed in place), for ZeRO-3 and
// ZeRO++ (qwZ + hpZ + qgZ, with error feedback), on every node layout of P.
#include <catch2/catch.hpp>

#include "core/engine_fixture.hpp"
#include "src/zero/kernel_progress.hpp"

using namespace zeropp;
using namespace zeropp::test;

namespace {

struct Schedule {
  int depth;
  bool overlap;
  // Emulated latency per cross-node message, with hpZ: the next micro-batch's
  // forward gathers inside the node (fast) while the last unit's reduction
  // crosses nodes (slow), so it is still in flight when the backward wants its
  // buffer back. hpZ gives exactly ZeRO-3's results (test_zeropp.cpp).
  double latency_us = 0;
};

struct Result {
  Trace trace;
  std::vector<std::vector<float>> grads;  // the last step's mean gradient, every unit
};

Result run_with(Config c, const Schedule& s) {
  c.zero.prefetch_depth = s.depth;
  c.zero.overlap = s.overlap;
  c.comm.internode_latency_us = s.latency_us;
  if (s.latency_us > 0) c.zero.hpz_partition_size = 0;
  Run run(c, MPI_COMM_WORLD);
  Result r;
  for (int64_t step = 0; step < c.train.steps; ++step) {
    const StepStats st = train_step(run, step, learning_rate(c.optim, step, c.train.steps));
    r.trace.losses.push_back(st.loss);
    r.trace.norms.push_back(st.grad_norm);
  }
  for (size_t u = 0; u < run.model->layout().units.size(); ++u) {
    r.trace.weights.push_back(run.engine.gather_master(int(u)));
    r.grads.push_back(run.engine.gather_grad(int(u)));
  }
  return r;
}

Config zeropp_full(Config c, int X) {
  c.zero.ranks_per_node = X;
  c.zero.quantized_weights = true;
  c.zero.weight_block = 32;
  c.zero.hpz_partition_size = 0;
  c.zero.quantized_gradients = true;
  c.zero.gradient_block = 32;
  c.zero.gradient_error_feedback = true;
  return c;
}

}  // namespace

TEST_CASE("overlap and prefetch depth give bitwise the blocking path's gradients and weights", "[overlap]") {
  const int P = world_size();
  for (int X = 1; X <= P; X *= 2) {
    if (P % X) continue;
    for (bool plus : {false, true})
      for (int A : {1, 2}) {
        Config c = tiny(A, "bf16");
        c.train.steps = 2;
        c.zero.ranks_per_node = X;
        if (plus) c = zeropp_full(c, X);
        const Result blocking = run_with(c, {0, false});
        for (const Schedule s : {Schedule{1, true}, Schedule{2, true}, Schedule{1, false}, Schedule{3, true},
                                 Schedule{1, true, X > 1 && X < P && !plus ? 3000.0 : 0.0}}) {
          const Result r = run_with(c, s);
          INFO("P=" << P << " X=" << X << " A=" << A << (plus ? " ZeRO++" : " ZeRO-3") << " depth=" << s.depth
                    << " overlap=" << s.overlap << " latency=" << s.latency_us);
          CHECK(r.trace.losses == blocking.trace.losses);
          CHECK(r.trace.norms == blocking.trace.norms);
          CHECK(r.grads == blocking.grads);
          CHECK(r.trace.weights == blocking.trace.weights);
        }
      }
  }
}

TEST_CASE("overlap: the memory report counts every gather slot and gradient buffer", "[overlap]") {
  Config c = tiny(1, "bf16");
  c.zero.prefetch_depth = 0;
  c.zero.overlap = false;
  Run one(c, MPI_COMM_WORLD);
  c.zero.prefetch_depth = 2;
  c.zero.overlap = true;
  Run three(c, MPI_COMM_WORLD);
  const MemoryReport a = one.engine.memory(), b = three.engine.memory();
  CHECK(b.gather == 3 * a.gather);   // 1 slot -> 3 slots
  CHECK(b.grad_full > a.grad_full);  // a second full-size gradient buffer
  CHECK(b.master == a.master);
}

TEST_CASE("KernelProgress polls after every Kokkos kernel, never re-entered, and stops when gone",
          "[overlap]") {
  Kokkos::View<float*> v("v", 16);
  int polls = 0, depth = 0, deepest = 0;
  {
    KernelProgress kp([&] {
      ++polls;
      deepest = std::max(deepest, ++depth);
      Kokkos::deep_copy(v, 1.0f);  // a kernel inside the poll: must not poll again
      --depth;
    });
    Kokkos::parallel_for(
        "k", 16, KOKKOS_LAMBDA(int i) { v(i) = float(i); });
    CHECK(polls == 1);
    float s = 0;
    Kokkos::parallel_reduce(
        "r", 16, KOKKOS_LAMBDA(int i, float& acc) { acc += v(i); }, s);
    CHECK(polls == 2);
  }
  CHECK(deepest == 1);
  Kokkos::parallel_for(
      "k", 16, KOKKOS_LAMBDA(int i) { v(i) = float(i); });
  CHECK(polls == 2);
}
