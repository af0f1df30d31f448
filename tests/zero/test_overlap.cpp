// Overlap (zero.overlap, zero.prefetch_depth): the nonblocking gradient
// reduction and deeper prefetch change when collectives run, never what they
// compute: losses, norms, gradients and weights are bitwise those of the
// blocking path (no prefetch, reductions completed in place), for ZeRO-3 and
// ZeRO++ (qwZ + hpZ + qgZ, with error feedback), on every node layout of P.
#include <catch2/catch.hpp>

#include "src/zero/kernel_progress.hpp"
#include "zero/engine_fixture.hpp"

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

// Trains c under schedule s; `after` (if set) runs after every step.
TracedRun run_with(Config c, const Schedule& s, const AfterStep& after = {}) {
  c.zero.prefetch_depth = s.depth;
  c.zero.overlap = s.overlap;
  c.comm.internode_latency_us = s.latency_us;
  if (s.latency_us > 0) c.zero.hpz_partition_size = 0;
  return train_traced(c, after);
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
        const TracedRun blocking = run_with(c, {0, false});
        for (const Schedule s : {Schedule{1, true}, Schedule{2, true}, Schedule{1, false}, Schedule{3, true},
                                 Schedule{1, true, X > 1 && X < P && !plus ? 3000.0 : 0.0}}) {
          const TracedRun r = run_with(c, s);
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

namespace {

// A run whose steps are separated by what must see, or change, the weights
// that the next step's first gathers (started at the end of a step, zero.overlap)
// carry: nothing (the next step takes them over), a validation pass and a test
// gather of one unit (both drop them, completed), and new master weights
// through the checkpoint shards (drops them: they are stale).
struct Between {
  TracedRun result;
  std::vector<double> evals, inter;
  std::vector<std::vector<float>> seen;  // gathered() between steps
  std::vector<ByteCounters> bytes;
  int sent_ahead = 0;  // steps after which bytes of the next one had been sent
};

Between run_between(const Config& c, const Schedule& s) {
  Between b;
  b.result = run_with(c, s, [&](Run& run, int64_t step, const StepStats& st) {
    b.inter.push_back(st.inter_node_bytes_all);
    b.bytes.push_back(st.bytes);
    if (run.comm->bytes_ahead() > 0) ++b.sent_ahead;
    if (step % 4 == 1) {
      b.evals.push_back(run.engine.eval_loss(micro_batches(*run.train, 50 + step, 1)));
    } else if (step % 4 == 2) {
      b.seen.push_back(run.engine.gathered(1, Pass::Backward));
    } else if (step % 4 == 3) {
      for (auto& g : run.engine.checkpoint_shards(false))
        if (g.first == "model")
          for (TensorShard& t : g.second)
            for (int64_t i = 0; t.data && i < t.end - t.begin; ++i) t.data[i] *= 0.75f;
      run.engine.weights_loaded();
    }
  });
  return b;
}

}  // namespace

TEST_CASE("cross-step prefetch: validation, gathers and new weights between steps see the right weights",
          "[overlap]") {
  const int P = world_size();
  for (int X : {1, P > 2 ? 2 : P}) {
    for (bool plus : {false, true})
      for (double clip : {0.5, 0.0}) {
        Config c = tiny(1, "bf16");
        c.train.steps = 7;
        c.optim.grad_clip = clip;  // 0: AdamW per unit while the last reduction is in flight
        c.zero.ranks_per_node = X;
        if (plus) c = zeropp_full(c, X);
        const Between blocking = run_between(c, {0, false});
        CHECK(blocking.sent_ahead == 0);
        for (const Schedule s : {Schedule{1, true}, Schedule{2, true}}) {
          const Between r = run_between(c, s);
          INFO("P=" << P << " X=" << X << (plus ? " ZeRO++" : " ZeRO-3") << " clip=" << clip
                    << " depth=" << s.depth);
          CHECK(r.sent_ahead == (P > 1 ? int(c.train.steps) - 1 : 0));  // every step but the last
          CHECK(r.result.trace.losses == blocking.result.trace.losses);
          CHECK(r.result.trace.norms == blocking.result.trace.norms);
          CHECK(r.evals == blocking.evals);
          CHECK(r.seen == blocking.seen);
          CHECK(r.result.trace.weights == blocking.result.trace.weights);
          CHECK(r.result.grads == blocking.result.grads);
          CHECK(r.inter == blocking.inter);  // each step counts the gathers it uses
          for (size_t k = 0; k < r.bytes.size(); ++k)
            for (int kind = 0; kind < kNumKinds; ++kind) {
              CHECK(r.bytes[k].of(Kind(kind)).intra == blocking.bytes[k].of(Kind(kind)).intra);
              CHECK(r.bytes[k].of(Kind(kind)).inter == blocking.bytes[k].of(Kind(kind)).inter);
            }
        }
      }
  }
}
