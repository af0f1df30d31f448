#include "src/app/bench.hpp"

#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <random>
#include <vector>

#include "kernels/blas_core.hpp"
#include "kernels/device_buffer.hpp"
#include "kernels/gemm.hpp"
#include "kernels/gemm_batched.hpp"
#include "kernels/gemm_bf16.hpp"
#include "kernels/parallel_chunks.hpp"
#include "src/app/logging.hpp"
#include "src/app/train.hpp"
#include "src/base/errors.hpp"
#include "src/zero/optimizer.hpp"
#include "src/zero/quant_scheme.hpp"

namespace zeropp {

// Each linear layer runs out = in·W, din = dout·W^T and dW = in^T·dout.
std::vector<GemmShape> model_gemm_shapes(const ModelConfig& m, int BT) {
  const int C = m.n_embd, V = m.vocab_size, L = m.n_layer;
  std::vector<GemmShape> s;
  const auto linear = [&](int in, int out, int count) {
    s.push_back({Trans::N, Trans::N, BT, out, in, count});  // forward
    s.push_back({Trans::N, Trans::T, BT, in, out, count});  // input gradient
    s.push_back({Trans::T, Trans::N, in, out, BT, count});  // weight gradient
  };
  linear(C, 3 * C, L);
  linear(C, C, L);
  linear(C, 4 * C, L);
  linear(4 * C, C, L);
  s.push_back({Trans::N, Trans::T, BT, V, C, 1});  // LM head forward: lnf·wte^T
  s.push_back({Trans::N, Trans::N, BT, C, V, 1});  // dlnf = dlogits·wte
  s.push_back({Trans::T, Trans::N, V, C, BT, 1});  // dwte = dlogits^T·lnf
  return s;
}

namespace {

// GFLOP/s of the GEMM library (OpenBLAS fp32, or the bf16 GEMM) on the
// model's shape mix: total FLOPs of one step's GEMMs over the time they take
// (each timed `reps` times, best kept).
double gemm_gflops(const ModelConfig& m, int BT, int reps, Precision prec) {
  const auto shapes = model_gemm_shapes(m, BT);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  double flops = 0, seconds = 0;
  for (const GemmShape& sh : shapes) {
    // engine memory: on the GPU (cuBLAS) while a device context is installed
    Buffer<float> A("bench A", int64_t(sh.M) * sh.K), B("bench B", int64_t(sh.K) * sh.N),
        C("bench C", int64_t(sh.M) * sh.N);
    for (const Buffer<float>* b : {&A, &B}) {
      std::vector<float> h(static_cast<size_t>(b->size()));
      for (auto& x : h) x = u(rng);
      copy_to_device(h.data(), b->view());
    }
    const int lda = sh.ta == Trans::N ? sh.K : sh.M, ldb = sh.tb == Trans::N ? sh.N : sh.K;
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
      const double t0 = MPI_Wtime();
      gemm_as(prec, sh.ta, sh.tb, sh.M, sh.N, sh.K, 1.0f, A.data(), lda, B.data(), ldb, 0.0f, C.data(), sh.N);
      if (device_context()) to_host(C, 1);  // the device's GEMM is asynchronous: wait for it
      best = std::min(best, MPI_Wtime() - t0);
    }
    flops += 2.0 * sh.M * sh.N * sh.K * sh.per_step;
    seconds += best * sh.per_step;
  }
  return flops / seconds * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Accumulated error of quantizing tensors: sqrt(sum err^2 / sum x^2) and
// max |err| / max |x|.
struct QuantError {
  double err2 = 0, x2 = 0, max_err = 0, max_x = 0;
  void add(const float* x, int64_t n, int bits, int64_t block) {
    const int64_t padded = (n + block - 1) / block * block;
    std::vector<float> in(static_cast<size_t>(padded), 0.0f), out(static_cast<size_t>(padded));
    std::copy(x, x + n, in.begin());
    const QuantScheme qs{bits, block, ScaleDType::F32};
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
  log0("zeropp bench quant: %s after %d steps (%lld parameters); error of blockwise symmetric quantization\n",
       cfg.train.out_dir.c_str(), steps, (long long)layout.numel);
  log0(
      "relative L2 = ||x - deq(q(x))|| / ||x||, relative max = max|x - deq| / max|x|, over every tensor\n\n");
  log0(
      "| block | scale overhead | weights int8 L2 | int8 max | weights int4 L2 | int4 max | grads int8 L2 | "
      "int8 max | grads int4 L2 | int4 max |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (int64_t block : {32l, 64l, 128l, 256l, 512l, 2048l, 8192l, 0l}) {  // 0: one scale per tensor
    QuantError e[2][2];                                                   // [weights|grads][int8|int4]
    for (size_t u = 0; u < layout.units.size(); ++u)
      for (const auto& p : layout.units[u].params)
        for (int what = 0; what < 2; ++what)
          for (int b = 0; b < 2; ++b) {
            const float* x = (what == 0 ? weights : grads)[u].data() + p.offset;
            const int64_t blk = block ? block : (p.numel + 1) / 2 * 2;
            e[what][b].add(x, p.numel, b == 0 ? 8 : 4, blk);
          }
    char label[32], over[32];
    std::snprintf(label, sizeof label, block ? "%lld" : "per tensor", (long long)block);
    std::snprintf(over, sizeof over, block ? "%.2f%% / %.2f%%" : "~0", block ? 400.0 / double(block) : 0.0,
                  block ? 800.0 / double(block) : 0.0);
    log0("| %s | %s | %.3e | %.3e | %.3e | %.3e | %.3e | %.3e | %.3e | %.3e |\n", label, over,
         e[0][0].rel_l2(), e[0][0].rel_max(), e[0][1].rel_l2(), e[0][1].rel_max(), e[1][0].rel_l2(),
         e[1][0].rel_max(), e[1][1].rel_l2(), e[1][1].rel_max());
  }
  log0("\nscale overhead: fp32 scale bytes per payload byte, int8 / int4\n");
  return kExitOk;
}

namespace {

// One precision's timed steps.
struct StepTiming {
  double step_ms, tokens_per_s, step_gflops, gemm_gflops;
  double sent_intra, sent_inter;  // bytes of one step, all ranks
};

StepTiming time_steps(const Config& cfg, int steps, std::string& ranks, std::string& device) {
  Run run(cfg);
  const auto& t = cfg.train;
  const double tokens = double(t.batch_size) * t.seq_len * t.grad_accum * run.topo.P;
  const double flops_per_token = 3 * forward_flops_per_token(cfg.model, t.seq_len);
  std::vector<double> ms;
  StepStats last;
  for (int s = 0; s <= steps; ++s) {  // step 0 warms up and is not timed
    ZCHECK_MPI(MPI_Barrier(run.topo.world.get()));
    const double t0 = MPI_Wtime();
    last = train_step(run, s, learning_rate(cfg.optim, s, steps + 1));
    ZCHECK_MPI(MPI_Barrier(run.topo.world.get()));
    if (s > 0) ms.push_back((MPI_Wtime() - t0) * 1e3);
  }
  StepTiming r{};
  r.step_ms = median(ms);
  r.tokens_per_s = tokens / (r.step_ms * 1e-3);
  r.step_gflops = flops_per_token * tokens / (r.step_ms * 1e-3) * 1e-9 / run.topo.P;
  r.gemm_gflops = gemm_gflops(cfg.model, t.batch_size * t.seq_len, 10, parse_precision(t.precision));
  // Bytes of one step by link class, summed over ranks (a plain MPI reduction:
  // this is reporting, not part of the accounted step).
  const auto sent = last.bytes.total();
  double mine[2] = {double(sent.intra), double(sent.inter)}, all[2] = {0, 0};
  ZCHECK_MPI(MPI_Reduce(mine, all, 2, MPI_DOUBLE, MPI_SUM, 0, run.topo.world.get()));
  r.sent_intra = all[0];
  r.sent_inter = all[1];
  ranks = run.topo.describe();
  device = run.device->describe();
  return r;
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
    c.train.precision = precision_name(p);
    r[int(p)] = time_steps(c, steps, ranks, device);
  }
  // The bf16 GEMM rate of each kernel this CPU has (the step ran the chosen one; not on the GPU).
  const int BT = cfg.train.batch_size * cfg.train.seq_len;
  std::string by_kernel = cfg.train.device == "host" ? "" : "not timed (the steps ran on the GPU)";
  for (Bf16Kernel k : {Bf16Kernel::RoundedBlas, Bf16Kernel::OneDnn}) {
    if (cfg.train.device != "host") break;
    try {
      force_bf16_kernel(k);
    } catch (const std::invalid_argument&) {
      continue;  // oneDNN has no bf16 matmul on this CPU
    }
    by_kernel += std::string(by_kernel.empty() ? "" : ", ") +
                 (k == Bf16Kernel::OneDnn ? "oneDNN matmul " : "BLAS on rounded operands ") +
                 std::to_string(gemm_gflops(cfg.model, BT, 10, Precision::BF16)) + " GFLOP/s";
  }
  force_bf16_kernel(std::nullopt);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  double peak = double(ru.ru_maxrss) * 1024, peak_max = 0;
  ZCHECK_MPI(MPI_Reduce(&peak, &peak_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
  const auto row = [](const StepTiming& x) {
    return std::to_string(x.step_ms) + " ms, " + std::to_string(x.tokens_per_s) + " tok/s, " +
           std::to_string(x.step_gflops) + " GFLOP/s/rank; GEMM " + std::to_string(x.gemm_gflops) +
           " GFLOP/s";
  };
  log_table("zeropp bench step",
            {
                {"ranks", ranks},
                {"device", device},
                {"BLAS", gemm_backend_name()},
                {"BLAS kernels", blas_core_name()},
                {"elementwise kernels", elementwise_kernels_name()},
                {"batched GEMM", gemm_batched_backend_name()},
                {"bf16 GEMM", gemm_bf16_backend_name()},
                {"bf16 GEMM by kernel", by_kernel},
                {"steps timed", std::to_string(steps) + " (after 1 warm-up step)"},
                {"fp32 step", row(r[0])},
                {"bf16 step", row(r[1])},
                {"bf16/fp32 speed-up", std::to_string(r[0].step_ms / r[1].step_ms)},
                {"peak RSS (max over ranks)", human_bytes(peak_max)},
                // the same in both precisions: communication does not change
                {"sent per step, intra-node", human_bytes(r[0].sent_intra) + " (all ranks)"},
                {"sent per step, inter-node", human_bytes(r[0].sent_inter) + " (all ranks)"},
            });
  if (const std::string w = blas_core_warning(); !w.empty()) log0("warning: %s\n", w.c_str());
  for (Precision p : {Precision::FP32, Precision::BF16}) {
    const StepTiming& x = r[int(p)];
    log0(
        "bench step | %s | %s | %.2f ms/step | %.0f tok/s | %.2f GFLOP/s/rank | GEMM %.2f GFLOP/s | ratio "
        "%.3f | "
        "intra %.3f MB | inter %.3f MB | peak RSS %.0f MiB\n",
        ranks.c_str(), precision_name(p), x.step_ms, x.tokens_per_s, x.step_gflops, x.gemm_gflops,
        x.step_gflops / x.gemm_gflops, x.sent_intra * 1e-6, x.sent_inter * 1e-6, peak_max / 1048576.0);
  }
  return kExitOk;
}

}  // namespace zeropp
