#include "src/bench/bench_generate.hpp"

#include <mpi.h>

#include "src/base/errors.hpp"
#include "src/base/logging.hpp"
#include "src/bench/median.hpp"
#include "src/generate/generate.hpp"
#include "src/train/train.hpp"
#include "src/zero/inference_weights.hpp"

namespace zeropp {

namespace {

struct Measured {
  double seconds = 0;            // the slowest rank's, refresh included
  double intra = 0, inter = 0;   // bytes all ranks sent
  double copy = 0, buffers = 0;  // bytes the source holds on rank 0
  std::string ranks;
};

// One generate call: refresh, then new_tokens greedy tokens with the KV
// cache (generate.hpp: a prefill, then one decode pass per token).
Measured generate_once(const Config& cfg, const BenchGenerateOptions& o) {
  Run run(cfg);
  auto src = run.engine.inference_weights();
  std::vector<int32_t> prompt;
  for (int i = 0; i < o.prompt_tokens; ++i) prompt.push_back(int32_t((7 * i + 3) % cfg.model.vocab_size));
  const PassRunner pass = [&](const std::function<void(UnitSource<float>&)>& f) { f(*src); };
  CoinStream coins(1);  // greedy: never drawn
  MPI_Comm w = run.topo.world.get();
  ZCHECK_MPI(MPI_Barrier(w));
  run.comm->counters().reset();
  const double t0 = MPI_Wtime();
  src->refresh();
  generate(*run.model, pass, {prompt}, o.new_tokens, SamplingRule{0.0, 0, 1.0}, coins, [](int, int32_t) {});
  double t = MPI_Wtime() - t0, tmax = 0;
  const auto b = run.comm->counters().total();
  double mine[2] = {double(b.intra), double(b.inter)}, all[2] = {0, 0};
  // Reporting, outside the measured call: plain MPI reductions, the same order on every rank.
  ZCHECK_MPI(MPI_Reduce(mine, all, 2, MPI_DOUBLE, MPI_SUM, 0, w));
  ZCHECK_MPI(MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, w));
  return {tmax, all[0], all[1], double(src->copy_bytes()), double(src->buffer_bytes()), run.topo.describe()};
}

}  // namespace

int run_bench_generate(const Config& cfg, const BenchGenerateOptions& o) {
  require_host(cfg, "bench generate");
  if (o.prompt_tokens < 1 || o.new_tokens < 1 || o.repeats < 1)
    throw Error("bench generate: --prompt-tokens, --new-tokens and --repeats must be at least 1");
  if (o.prompt_tokens + o.new_tokens > cfg.train.seq_len)
    throw Error(
        "bench generate: --prompt-tokens + --new-tokens = " + std::to_string(o.prompt_tokens + o.new_tokens) +
        " exceeds train.seq_len = " + std::to_string(cfg.train.seq_len) +
        " (the model's longest context here)");
  for (double g : o.gbps)
    if (g < 0) throw Error("bench generate: --bandwidths: " + std::to_string(g) + " is negative");
  std::vector<WeightSource> weights;
  for (const auto& n : deck_names(WeightSource{}))
    if (o.weights.empty()) weights.push_back(n.value);
  for (const std::string& v : o.weights) {
    const std::optional<WeightSource> w = deck_value<WeightSource>(v);
    if (!w)
      throw Error("bench generate: --weights: zero.inference_weights = '" + v + "' is not a weight source");
    weights.push_back(*w);
  }
  log0(
      "zeropp bench generate: %d prompt tokens, %d new (greedy, KV cache: a prefill, then one decode pass "
      "per token), batch 1; "
      "time = the slowest rank's for one generate call, refresh included; tokens/s: median of %d "
      "interleaved runs; bytes per generated token: all ranks, refresh included; copy, buffers: the "
      "source's memory on rank 0 (the per-call copy; the per-use buffers); Gbit/s: emulated per-rank "
      "inter-node link (0: off)\n\n",
      o.prompt_tokens, o.new_tokens, o.repeats);
  log0("| ranks | weights | Gbit/s | tokens/s | intra B/token | inter B/token | copy MB | buffers MB |\n");
  log0("|---|---|---|---|---|---|---|---|\n");
  for (double g : o.gbps) {
    std::vector<std::vector<double>> rate(weights.size());
    std::vector<Measured> last(weights.size());
    for (int r = 0; r < o.repeats; ++r)
      for (size_t i = 0; i < weights.size(); ++i) {
        Config c = cfg;
        c.zero.inference_weights = weights[i];
        c.comm.internode_gbps = g;
        last[i] = generate_once(c, o);
        rate[i].push_back(o.new_tokens / last[i].seconds);
      }
    for (size_t i = 0; i < weights.size(); ++i) {
      const Measured& m = last[i];
      log0("| %s | %s | %g | %.2f | %.0f | %.0f | %.3f | %.3f |\n", m.ranks.c_str(), deck_name(weights[i]), g,
           median(rate[i]), m.intra / o.new_tokens, m.inter / o.new_tokens, m.copy * 1e-6, m.buffers * 1e-6);
    }
  }
  return kExitOk;
}

}  // namespace zeropp
