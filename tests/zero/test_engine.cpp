// The ZeRO-3 engine on P ranks against one rank, and its byte accounting.
//
// Runs at 1, 2 and 4 ranks (ctest engine_np*); at each P every emulated node
// layout X (X divides P) is tried. The reference is the same engine on
// MPI_COMM_SELF running the same global batch as A·P accumulated micro-batches:
// with data.shuffle = false, rank r's micro-batch m of step s reads window
// (s·A + m)·P + r, and the reference's micro-batch m·P + r of step s reads
// window s·A·P + m·P + r, the same one (io/data/data_loader.hpp).
#include <catch2/catch.hpp>
#include <cmath>

#include "src/zero/shard.hpp"
#include "zero/engine_fixture.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEST_CASE("ZeRO-3 on P ranks equals one rank on the same global batch (fp32)", "[engine]") {
  const int P = world_size();
  for (int A : {1, 2}) {
    Config ref_cfg = tiny(A * P, "fp32");
    const Trace ref = train(ref_cfg, MPI_COMM_SELF);
    for (int X = 1; X <= P; X *= 2) {
      if (P % X) continue;
      Config cfg = tiny(A, "fp32");
      cfg.zero.ranks_per_node = X;
      const Trace got = train(cfg, MPI_COMM_WORLD);
      INFO("P=" << P << " X=" << X << " A=" << A);
      for (size_t s = 0; s < ref.losses.size(); ++s) {
        CHECK(got.losses[s] == Approx(ref.losses[s]).epsilon(1e-6));
        CHECK(got.norms[s] == Approx(ref.norms[s]).epsilon(1e-5));
      }
      double worst = 0;
      for (size_t u = 0; u < ref.weights.size(); ++u) {
        REQUIRE(got.weights[u].size() == ref.weights[u].size());
        worst = std::max(worst, max_rel(got.weights[u], ref.weights[u]));
      }
      CHECK(worst < 1e-5);  // max |difference| over max |weight|, per unit
      if (got.weights[0].size() && ref.losses.size())
        WARN("P=" << P << " X=" << X << " A=" << A << ": weights differ by " << worst << " (relative)");
    }
  }
}

TEST_CASE("ZeRO-3 with bf16 communication stays close to fp32", "[engine]") {
  const int P = world_size();
  const Trace f32 = train(tiny(1, "fp32"), MPI_COMM_WORLD);
  const Trace b16 = train(tiny(1, "bf16"), MPI_COMM_WORLD);
  for (size_t s = 0; s < f32.losses.size(); ++s) {
    INFO("P=" << P << " step " << s);
    CHECK(std::abs(b16.losses[s] - f32.losses[s]) < 0.01 * f32.losses[s]);  // stated bound: 1%
  }
  CHECK(b16.losses.back() < b16.losses.front());
}

TEST_CASE("ZeRO-3 byte counters equal their closed forms", "[engine][engine-bytes]") {
  const int P = world_size();
  for (const std::string dtype : {"fp32", "bf16"})
    for (int X = 1; X <= P; X *= 2) {
      if (P % X) continue;
      for (int A : {1, 2}) {
        Config cfg = tiny(A, dtype);
        cfg.zero.ranks_per_node = X;
        Run run(cfg);
        const StepStats st = train_step(run, 0, 1e-3);
        const int64_t w = dtype == "fp32" ? 4 : 2;
        const auto& units = run.model->layout().units;
        const int L = cfg.model.n_layer;
        // Per micro-batch: forward gathers every unit and the embeddings twice
        // (tied head); backward re-gathers all but the embeddings (still
        // resident from the forward's end); every unit is reduce-scattered once.
        int64_t fwd = 0, bwd = 0, rs = 0;
        for (size_t u = 0; u < units.size(); ++u) {
          const int64_t slice = slice_size(units[u].numel, P);
          const int64_t ring = (P - 1) * slice * w;
          fwd += ring * (u == 0 ? 2 : 1);
          bwd += u == 0 ? 0 : ring;
          rs += ring;
        }
        REQUIRE(units.size() == size_t(L + 2));
        const bool crosses = run.topo.Y > 1 && run.topo.local == X - 1;  // the ring's node-boundary sender
        INFO("P=" << P << " X=" << X << " A=" << A << " dtype " << dtype << " rank " << run.topo.rank);
        const auto check = [&](Kind k, Purpose p, int64_t bytes) {
          const auto b = st.bytes.at(k, p);
          CHECK(b.total() == bytes);
          CHECK(b.inter == (crosses ? bytes : 0));
        };
        check(Kind::AllGather, Purpose::FwdGather, A * fwd);
        check(Kind::AllGather, Purpose::BwdGather, A * bwd);
        check(Kind::ReduceScatter, Purpose::GradReduce, A * rs);
        check(Kind::AllReduce, Purpose::Other, (P - 1) * 3 * 8);  // loss, squared norm, bytes: doubles
        CHECK(st.bytes.total().total() == A * (fwd + bwd + rs) + (P - 1) * 24);
        // The log line's figure: what all ranks sent across nodes before that all-reduce.
        const int64_t per_sender = A * (fwd + bwd + rs);
        CHECK(st.inter_node_bytes_all == double(run.topo.Y > 1 ? run.topo.Y * per_sender : 0));
      }
    }
}

TEST_CASE("model-state memory per rank is 16 bytes per parameter over P", "[engine]") {
  const int P = world_size();
  Config cfg = tiny(1, "bf16");
  Run run(cfg);
  const MemoryReport m = run.engine.memory();
  int64_t slices = 0;
  for (const auto& u : run.model->layout().units) slices += slice_size(u.numel, P);
  CHECK(m.master + m.grad + m.adam == 16 * slices);
  CHECK(16 * slices <= 16 * (run.engine.parameters() / P + int64_t(run.model->layout().units.size())));
}
