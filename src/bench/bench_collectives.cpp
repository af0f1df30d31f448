#include "src/bench/bench_collectives.hpp"

#include <mpi.h>

#include <algorithm>

#include "src/base/errors.hpp"
#include "src/base/logging.hpp"
#include "src/train/train.hpp"
#include "src/zero/optimizer.hpp"

namespace zeropp {

namespace {

// fp8: qwZ's weights in e4m3 (8 bits); else in the deck's zero.weight_format.
struct Variant {
  const char* name;
  bool qwz, hpz, qgz, fp8;
};
const Variant kVariants[] = {{"ZeRO-3", false, false, false, false}, {"qwZ", true, false, false, false},
                             {"qwZ fp8", true, false, false, true},  {"hpZ", false, true, false, false},
                             {"qgZ", false, false, true, false},     {"ZeRO++", true, true, true, false}};

// One kind's share of a step: the wait time (max over ranks) and the bytes all
// ranks sent.
struct KindRow {
  double seconds = 0, intra = 0, inter = 0;
};

// Runs warm-up step 0 and `steps` more; the last step's counters per kind.
std::vector<KindRow> measure(const Config& cfg, int steps, std::string& ranks) {
  Run run(cfg);
  StepStats last;
  for (int s = 0; s <= steps; ++s) last = train_step(run, s, learning_rate(cfg.optim, s, steps + 1));
  std::vector<KindRow> rows(kNumKinds);
  for (int k = 0; k < kNumKinds; ++k) {
    const auto b = last.bytes.of(Kind(k));
    double mine[2] = {double(b.intra), double(b.inter)}, all[2] = {0, 0};
    double t = last.bytes.seconds[size_t(k)], tmax = 0;
    // Reporting, not part of the accounted step: plain MPI reductions, the same order on every rank.
    ZCHECK_MPI(MPI_Reduce(mine, all, 2, MPI_DOUBLE, MPI_SUM, 0, run.topo.world.get()));
    ZCHECK_MPI(MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, run.topo.world.get()));
    rows[size_t(k)] = {tmax, all[0], all[1]};
  }
  ranks = run.topo.describe();
  return rows;
}

}  // namespace

int run_bench_collectives(const Config& cfg, int steps, const std::vector<double>& gbps,
                          const std::vector<double>& latencies_us) {
  if (steps < 1) throw Error("bench collectives: --steps must be at least 1, got " + std::to_string(steps));
  require_host(cfg, "bench collectives");
  for (double g : gbps)
    if (g < 0) throw Error("bench collectives: --bandwidths: " + std::to_string(g) + " is negative");
  for (double l : latencies_us)
    if (l < 0) throw Error("bench collectives: --latencies-us: " + std::to_string(l) + " is negative");
  int P = 1;
  ZCHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &P));
  log0(
      "zeropp bench collectives: step %d (after %d), per collective kind; time = the slowest rank's wait "
      "(exposed time, what prefetching did not hide); bytes = all ranks, one step; GB/s = bytes / %d ranks "
      "/ time; Gbit/s and us = emulated per-rank inter-node link (0: unlimited, none)\n\n",
      steps, steps, P);
  log0(
      "| ranks | variant | Gbit/s | latency us | collective | time ms | intra MB | inter MB | GB/s per rank "
      "|\n");
  log0("|---|---|---|---|---|---|---|---|---|\n");
  for (double g : gbps)
    for (double l : latencies_us)
      for (const Variant& v : kVariants) {
        Config c = cfg;
        c.zero.quantized_weights = v.qwz;
        c.zero.hpz_partition_size = v.hpz ? 0 : 1;
        c.zero.quantized_gradients = v.qgz;
        if (v.fp8) {
          c.zero.weight_format = WeightFormat::FP8;
          c.zero.weight_bits = 8;
        }
        c.comm.internode_gbps = g;
        c.comm.internode_latency_us = l;
        std::string ranks;
        const auto rows = measure(c, steps, ranks);
        for (int k = 0; k < kNumKinds; ++k) {
          const KindRow& r = rows[size_t(k)];
          if (r.intra + r.inter == 0) continue;
          const double gbs = r.seconds > 0 ? (r.intra + r.inter) / P / r.seconds * 1e-9 : 0;
          log0("| %s | %s | %g | %g | %s | %.3f | %.3f | %.3f | %.3f |\n", ranks.c_str(), v.name, g, l,
               name_of(Kind(k)), r.seconds * 1e3, r.intra * 1e-6, r.inter * 1e-6, gbs);
        }
      }
  return kExitOk;
}

}  // namespace zeropp
