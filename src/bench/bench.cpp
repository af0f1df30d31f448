#include "src/bench/bench.hpp"

#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "kernels/gemm/blas_core.hpp"
#include "kernels/gemm/gemm.hpp"
#include "kernels/gemm/gemm_batched.hpp"
#include "kernels/gemm/gemm_bf16.hpp"
#include "kernels/runtime/parallel_chunks.hpp"
#include "src/base/errors.hpp"
#include "src/base/logging.hpp"
#include "src/bench/gemm_mix.hpp"
#include "src/bench/paired_ratio.hpp"
#include "src/memory/memory_estimate.hpp"
#include "src/run/blas_kernels.hpp"
#include "src/train/train.hpp"
#include "src/zero/optimizer.hpp"
#include "src/zero/quant_scheme.hpp"

namespace zeropp {

namespace {

// Accumulated error of quantizing tensors: sqrt(sum err^2 / sum x^2) and
// max |err| / max |x|.
struct QuantError {
  double err2 = 0, x2 = 0, max_err = 0, max_x = 0;
  void add(const float* x, int64_t n, const QuantScheme& qs) {
    const int64_t block = qs.block, padded = (n + block - 1) / block * block;
    std::vector<float> in(static_cast<size_t>(padded), 0.0f), out(static_cast<size_t>(padded));
    std::copy(x, x + n, in.begin());
    std::vector<uint8_t> q(static_cast<size_t>(qs.payload_bytes(padded)));
    std::vector<float> scales(static_cast<size_t>(padded / block));
    qs.quantize(in.data(), q.data(), scales.data(), padded);
    qs.dequantize(q.data(), scales.data(), out.data(), padded);
    for (int64_t i = 0; i < n; ++i) {
      const double e = double(out[size_t(i)]) - double(x[i]);
      err2 += e * e;
      x2 += double(x[i]) * x[i];
      max_err = std::max(max_err, std::abs(e));
      max_x = std::max(max_x, double(std::abs(x[i])));
    }
  }
  double rel_l2() const { return x2 > 0 ? std::sqrt(err2 / x2) : 0; }
  double rel_max() const { return max_x > 0 ? max_err / max_x : 0; }
};

// The formats measured: int8, int4 and, for the weights only (it is a
// weight-gather format), fp8 e4m3.
constexpr int kSchemes = 3;
QuantScheme scheme_of(int i, int64_t block) {
  return {i == 1 ? 4 : 8, block, ScaleDType::F32, i == 2 ? QuantElement::E4M3 : QuantElement::Int};
}

}  // namespace

int run_bench_quant(const Config& cfg, int steps) {
  if (steps < 1) throw Error("bench quant: --steps must be at least 1, got " + std::to_string(steps));
  require_host(cfg, "bench quant");
  Run run(cfg);
  for (int s = 0; s < steps; ++s) train_step(run, s, learning_rate(cfg.optim, s, steps));
  const auto& layout = run.model->layout();
  std::vector<std::vector<float>> weights, grads;
  for (size_t u = 0; u < layout.units.size(); ++u) {
    weights.push_back(run.engine.gather_master(int(u)));
    grads.push_back(run.engine.gather_grad(int(u)));
  }
  log0(
      "zeropp bench quant: %s after %d steps (%lld parameters); error of blockwise quantization (symmetric "
      "integers; fp8 e4m3 for weights)\n",
      cfg.train.out_dir.c_str(), steps, (long long)layout.numel);
  log0(
      "relative L2 = ||x - deq(q(x))|| / ||x||, relative max = max|x - deq| / max|x|, over every tensor\n\n");
  log0(
      "| block | scale overhead | weights int8 L2 | int8 max | weights int4 L2 | int4 max | weights fp8 L2 | "
      "fp8 "
      "max | grads int8 L2 | int8 max | grads int4 L2 | int4 max "
      "|\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int64_t block : {32l, 64l, 128l, 256l, 512l, 2048l, 8192l, 0l}) {  // 0: one scale per tensor
    QuantError e[2][kSchemes];                                            // [weights|grads][int8|int4|fp8]
    for (size_t u = 0; u < layout.units.size(); ++u)
      for (const auto& p : layout.units[u].params)
        for (int what = 0; what < 2; ++what)
          for (int b = 0; b < (what == 0 ? kSchemes : 2); ++b) {
            const float* x = (what == 0 ? weights : grads)[u].data() + p.offset;
            const int64_t blk = block ? block : (p.numel + 1) / 2 * 2;
            e[what][b].add(x, p.numel, scheme_of(b, blk));
          }
    char label[32], over[32];
    std::snprintf(label, sizeof label, block ? "%lld" : "per tensor", (long long)block);
    std::snprintf(over, sizeof over, block ? "%.2f%% / %.2f%%" : "~0", block ? 400.0 / double(block) : 0.0,
                  block ? 800.0 / double(block) : 0.0);
    log0("| %s | %s | %.3e | %.3e | %.3e | %.3e | %.3e | %.3e | %.3e | %.3e | %.3e | %.3e |\n", label, over,
         e[0][0].rel_l2(), e[0][0].rel_max(), e[0][1].rel_l2(), e[0][1].rel_max(), e[0][2].rel_l2(),
         e[0][2].rel_max(), e[1][0].rel_l2(), e[1][0].rel_max(), e[1][1].rel_l2(), e[1][1].rel_max());
  }
  log0("\nscale overhead: fp32 scale bytes per payload byte, int8 (and fp8) / int4\n");
  return kExitOk;
}

namespace {

// Timed calls per shape after each step, after one untimed call: the best of
// two drops one interruption (a preemption, a page fault) while keeping the
// mix close in time to the step it is paired with (it takes ~3x the step's GEMM time).
constexpr int kPairedTimedCalls = 2;
// The older statistic, kept for comparison: measured once after the steps.
constexpr int kOnceTimedCalls = 10;

// One precision's timed steps.
struct StepTiming {
  double step_ms, tokens_per_s, step_gflops;
  PairedRatio paired;             // each step against the GEMM mix timed right after it
  double once_gemm_gflops;        // the GEMM mix once after all steps, best of kOnceTimedCalls
  double sent_intra, sent_inter;  // bytes of one step, all ranks
};

StepTiming time_steps(const Config& cfg, int steps, std::string& ranks, std::string& device) {
  Run run(cfg);  // installs the device context first: the mix's operands live where the step's do
  const auto& t = cfg.train;
  MPI_Comm world = run.topo.world.get();
  const double tokens = double(t.batch_size) * t.seq_len * t.grad_accum * run.topo.P;
  const double step_flops = 3 * forward_flops_per_token(cfg.model, t.seq_len) * tokens / run.topo.P;
  const GemmMix mix(model_gemm_shapes(cfg.model, t.batch_size * t.seq_len), t.precision);
  std::vector<double> step_s, mix_s;
  StepStats last;
  for (int s = 0; s <= steps; ++s) {  // step 0 warms up and is not timed
    ZCHECK_MPI(MPI_Barrier(world));
    const double t0 = MPI_Wtime();
    last = train_step(run, s, learning_rate(cfg.optim, s, steps + 1));
    ZCHECK_MPI(MPI_Barrier(world));
    if (s == 0) continue;
    step_s.push_back(MPI_Wtime() - t0);
    // Bulk-synchronous: the slowest rank's mix sets the reference, as the slowest rank sets the step.
    double mine = mix.seconds(kPairedTimedCalls), slowest = 0;
    ZCHECK_MPI(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, world));
    mix_s.push_back(slowest);
  }
  StepTiming r{};
  r.step_ms = median(step_s) * 1e3;
  r.tokens_per_s = tokens / (r.step_ms * 1e-3);
  r.step_gflops = step_flops / (r.step_ms * 1e-3) * 1e-9;
  r.paired = paired_ratio(step_s, mix_s, step_flops, mix.flops());
  r.once_gemm_gflops = mix.flops() / mix.seconds(kOnceTimedCalls) * 1e-9;
  // Bytes of one step by link class, summed over ranks (a plain MPI reduction:
  // this is reporting, not part of the accounted step).
  const auto sent = last.bytes.total();
  double mine[2] = {double(sent.intra), double(sent.inter)}, all[2] = {0, 0};
  ZCHECK_MPI(MPI_Reduce(mine, all, 2, MPI_DOUBLE, MPI_SUM, 0, world));
  r.sent_intra = all[0];
  r.sent_inter = all[1];
  ranks = run.topo.describe();
  device = run.device->describe();
  return r;
}

// Each model.recompute policy's activations next to its fp32 step, in this
// run: the deck's policy is `deck` (already timed), the others are timed here.
struct RecomputeRow {
  std::string policy, activations;
  double step_ms;
};
std::vector<RecomputeRow> time_recompute(const Config& cfg, int steps, const StepTiming& deck) {
  std::vector<RecomputeRow> rows;
  std::string ranks, device;
  for (const auto& p : deck_names(Recompute{})) {
    Config c = cfg;
    c.model.recompute = p.value;
    c.train.precision = Precision::FP32;
    const double ms =
        cfg.model.recompute == p.value ? deck.step_ms : time_steps(c, steps, ranks, device).step_ms;
    rows.push_back(
        {p.name, human_bytes(double(activation_bytes(c.model, c.train.batch_size, c.train.seq_len))), ms});
  }
  return rows;
}

// The bf16 GEMM rate of each kernel this CPU has (the step ran the chosen one; not on the GPU).
std::string bf16_rates_by_kernel(const Config& cfg) {
  if (cfg.train.device != Device::Host) return "not timed (the steps ran on the GPU)";
  std::string by_kernel;
  GemmMix bf16(model_gemm_shapes(cfg.model, cfg.train.batch_size * cfg.train.seq_len), Precision::BF16);
  for (Bf16Kernel k : {Bf16Kernel::RoundedBlas, Bf16Kernel::OneDnn}) {
    try {
      force_bf16_kernel(k);
    } catch (const std::invalid_argument&) {
      continue;  // oneDNN has no bf16 matmul on this CPU
    }
    by_kernel += std::string(by_kernel.empty() ? "" : ", ") +
                 (k == Bf16Kernel::OneDnn ? "oneDNN matmul " : "BLAS on rounded operands ") +
                 std::to_string(bf16.flops() / bf16.seconds(kOnceTimedCalls) * 1e-9) + " GFLOP/s";
  }
  force_bf16_kernel(std::nullopt);
  return by_kernel;
}

// Peak resident memory, the largest over ranks (on rank 0).
double peak_rss_max_over_ranks() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  double peak = double(ru.ru_maxrss) * 1024, peak_max = 0;
  ZCHECK_MPI(MPI_Reduce(&peak, &peak_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
  return peak_max;
}

std::string step_row(const StepTiming& x) {
  return std::to_string(x.step_ms) + " ms, " + std::to_string(x.tokens_per_s) + " tok/s, " +
         std::to_string(x.step_gflops) + " GFLOP/s/rank; GEMM " + std::to_string(x.paired.reference_gflops) +
         " GFLOP/s (median over the steps)";
}

std::string ratio_spread(const PairedRatio& x) {
  char b[64];
  std::snprintf(b, sizeof b, "%.3f (%.3f-%.3f)", x.median, x.min, x.max);
  return b;
}

std::string paired_row(const StepTiming& x) {
  return ratio_spread(x.paired) + ": median (min-max) of step rate / GEMM rate timed right after that step";
}

std::string once_row(const StepTiming& x) {
  char b[128];
  std::snprintf(b, sizeof b,
                "%.3f: median step rate / GEMM %.2f GFLOP/s timed once after all steps, best of %d",
                x.step_gflops / x.once_gemm_gflops, x.once_gemm_gflops, kOnceTimedCalls);
  return b;
}

}  // namespace

// Times the same steps in fp32 and in bf16 (train.precision is ignored: both
// run), each next to its GEMM library's rate on the model's shapes measured
// in the same process.
int run_bench_step(const Config& cfg, int steps) {
  if (steps < 1) throw Error("bench step: --steps must be at least 1, got " + std::to_string(steps));
  // train.device = "cuda": the steps and the GEMM column on the GPU (Run installs its
  // context; builds without CUDA or machines without a GPU refuse there, naming train.device).
  std::string ranks, device;
  StepTiming r[2];
  for (Precision p : {Precision::FP32, Precision::BF16}) {
    Config c = cfg;
    c.train.precision = p;
    r[int(p)] = time_steps(c, steps, ranks, device);
  }
  const std::vector<RecomputeRow> policies = time_recompute(cfg, steps, r[0]);
  const std::string by_kernel = bf16_rates_by_kernel(cfg);
  const double peak_max = peak_rss_max_over_ranks();
  std::vector<std::pair<std::string, std::string>> table = {
      {"ranks", ranks},
      {"device", device},
      {"BLAS", gemm_backend_name()},
      {"BLAS kernels", blas_kernels_summary()},
      {"elementwise kernels", elementwise_kernels_name()},
      {"batched GEMM", gemm_batched_backend_name()},
      {"bf16 GEMM", gemm_bf16_backend_name()},
      {"bf16 GEMM by kernel", by_kernel},
      {"steps timed", std::to_string(steps) + " (after 1 warm-up step)"},
      {"fp32 step", step_row(r[0])},
      {"bf16 step", step_row(r[1])},
      {"fp32 GEMM ratio, paired", paired_row(r[0])},
      {"bf16 GEMM ratio, paired", paired_row(r[1])},
      {"fp32 GEMM ratio, once after", once_row(r[0])},
      {"bf16 GEMM ratio, once after", once_row(r[1])},
      {"bf16/fp32 speed-up", std::to_string(r[0].step_ms / r[1].step_ms)},
      {"peak RSS (max over ranks)", human_bytes(peak_max)},
      // the same in both precisions: communication does not change
      {"sent per step, intra-node", human_bytes(r[0].sent_intra) + " (all ranks)"},
      {"sent per step, inter-node", human_bytes(r[0].sent_inter) + " (all ranks)"},
  };
  for (const RecomputeRow& x : policies)
    table.emplace_back("fp32 recompute " + x.policy,
                       "activations " + x.activations + ", " + std::to_string(x.step_ms) + " ms/step (" +
                           std::to_string(x.step_ms / policies[0].step_ms) + " x none)");
  log_table("zeropp bench step", table);
  if (const std::string w = blas_core_warning(); !w.empty()) log0("warning: %s\n", w.c_str());
  for (Precision p : {Precision::FP32, Precision::BF16}) {
    const StepTiming& x = r[int(p)];
    log0(
        "bench step | %s | %s | %.2f ms/step | %.0f tok/s | %.2f GFLOP/s/rank | GEMM %.2f GFLOP/s | ratio %s "
        "| "
        "intra %.3f MB | inter %.3f MB | peak RSS %.0f MiB\n",
        ranks.c_str(), deck_name(p), x.step_ms, x.tokens_per_s, x.step_gflops, x.paired.reference_gflops,
        ratio_spread(x.paired).c_str(), x.sent_intra * 1e-6, x.sent_inter * 1e-6, peak_max / 1048576.0);
  }
  for (const RecomputeRow& x : policies)
    log0("bench step | %s | fp32 | recompute %s | activations %s | %.2f ms/step\n", ranks.c_str(),
         x.policy.c_str(), x.activations.c_str(), x.step_ms);
  return kExitOk;
}

}  // namespace zeropp
