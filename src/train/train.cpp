#include "src/train/train.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "io/data/data_loader.hpp"
#include "io/files/metrics.hpp"
#include "kernels/gemm/blas_core.hpp"
#include "kernels/gemm/gemm.hpp"
#include "kernels/gemm/gemm_batched.hpp"
#include "kernels/gemm/gemm_bf16.hpp"
#include "kernels/runtime/parallel_chunks.hpp"
#include "src/base/errors.hpp"
#include "src/base/logging.hpp"
#include "src/comm/communicator.hpp"
#include "src/comm/make_communicator.hpp"
#include "src/comm/stalling_communicator.hpp"
#include "src/comm/topology.hpp"
#include "src/generate/generate.hpp"
#include "src/run/blas_kernels.hpp"
#include "src/run/build_info.hpp"
#include "src/run/run_session.hpp"
#include "src/run/save_and_resume.hpp"
#include "src/run/startup_rows.hpp"
#include "src/run/step_bytes.hpp"
#include "src/zero/engine.hpp"
#include "src/zero/optimizer.hpp"

namespace zeropp {

namespace {

// This rank's links for scaling studies on one machine (src/comm/link_emulator.hpp).
EmulatedLinks emulated_links(const CommConfig& c) {
  return EmulatedLinks(LinkEmulator(c.internode_gbps, c.internode_latency_us),
                       LinkEmulator(c.intranode_gbps, c.intranode_latency_us));
}

StartupRows startup_rows(const Config& cfg, const std::string& deck, const Topology& topo,
                         const Engine& engine, const MemoryCheck& memory, const Communicator& comm,
                         const DeviceRun& device) {
  const auto& m = cfg.model;
  const auto& t = cfg.train;
  const double fpt = 3 * forward_flops_per_token(m, t.seq_len);
  const int64_t tokens_per_step = int64_t(t.batch_size) * t.seq_len * t.grad_accum * topo.P;
  char buf[256];
  StartupRows rows = common_startup_rows(deck, topo, m, engine.parameters());
  std::snprintf(buf, sizeof buf, "%.3g (training: 3 x forward)", fpt);
  rows.emplace_back("FLOPs per token", buf);
  std::snprintf(buf, sizeof buf, "B=%d T=%d A=%d P=%d -> %lld tokens/step", t.batch_size, t.seq_len,
                t.grad_accum, topo.P, (long long)tokens_per_step);
  rows.emplace_back("batch", buf);
  rows.emplace_back("steps", std::to_string(t.steps));
  const auto& z = cfg.zero;
  std::string zero = "ZeRO-3, " + std::string(deck_name(z.comm_dtype)) + " communication";
  if (z.quantized_weights)
    zero += ", qwZ " +
            (z.weight_format == WeightFormat::FP8 ? std::string("fp8 e4m3")
                                                  : "int" + std::to_string(z.weight_bits)) +
            " block " + std::to_string(z.weight_block);
  if (engine.hpz_size() > 1) zero += ", hpZ groups of " + std::to_string(engine.hpz_size());
  if (z.quantized_gradients)
    zero += ", qgZ int" + std::to_string(z.intra_node_gradient_bits) + "/int" +
            std::to_string(z.inter_node_gradient_bits) + " block " + std::to_string(z.gradient_block) +
            (z.gradient_error_feedback ? " + error feedback" : "");
  rows.emplace_back("engine", zero);
  rows.emplace_back("communicator",
                    std::string(comm.backend()) + " (comm.backend = " + deck_name(cfg.comm.backend) + ")");
  rows.emplace_back("device", device.describe());
  rows.emplace_back("memory per rank", memory_summary(memory));
  rows.emplace_back("recompute", recompute_summary(m, t.batch_size, t.seq_len));
  rows.emplace_back("BLAS", gemm_backend_name());
  rows.emplace_back("BLAS kernels", blas_kernels_summary());
  rows.emplace_back("elementwise kernels", elementwise_kernels_name());
  rows.emplace_back("oneDNN", onednn_description());
  rows.emplace_back("batched GEMM", gemm_batched_backend_name());
  rows.emplace_back("precision",
                    t.precision == Precision::BF16 ? "bf16 GEMMs on " + gemm_bf16_backend_name() : "fp32");
  rows.emplace_back("Kokkos", ExecSpace::name());
  rows.emplace_back("data",
                    token_file_spec(cfg.data.train) + (cfg.data.shuffle ? " (shuffled)" : " (in order)"));
  rows.emplace_back("output", cfg.train.out_dir);
  return rows;
}

}  // namespace

namespace {
std::unique_ptr<DataLoader> open_loader(const Config& cfg, const Topology& topo, bool validation) {
  const auto& t = cfg.train;
  if (validation)
    return cfg.data.val.empty() || t.val_batches == 0
               ? nullptr
               : std::make_unique<DataLoader>(DataLoader::validation(token_file_spec(cfg.data.val),
                                                                     t.batch_size, t.seq_len, topo.rank,
                                                                     topo.P, cfg.model.vocab_size));
  return std::make_unique<DataLoader>(token_file_spec(cfg.data.train), t.batch_size, t.seq_len, topo.rank,
                                      topo.P, t.grad_accum, cfg.model.vocab_size, cfg.data.shuffle,
                                      uint64_t(t.seed));
}
}  // namespace

Run::Run(const Config& cfg_, MPI_Comm base, MemoryEstimator estimate)
    : cfg(cfg_),
      topo(cfg.zero.ranks_per_node, base),
      train(collectively(topo.world.get(), [&] { return open_loader(cfg, topo, false); })),
      val(collectively(topo.world.get(), [&] { return open_loader(cfg, topo, true); })),
      memory(check_memory(estimate(cfg, topo.P, topo.X), cfg, topo)),
      device(collectively(topo.world.get(), [&] { return std::make_unique<DeviceRun>(cfg, topo, memory); })),
      // The engine's buffers are device memory with train.device = "cuda": comm.backend = auto may be nccl.
      comm(collectively(topo.world.get(),
                        [&] {
                          return with_stall(
                              make_communicator(cfg.comm.backend, topo, cfg.comm.timeout_s,
                                                cfg.train.device == Device::Cuda, cfg.comm.device_staging,
                                                emulated_links(cfg.comm)),
                              topo.rank, cfg.comm.timeout_s, cfg.comm.fault_stall_rank,
                              cfg.comm.fault_stall_step);
                        })),
      world(Group::world(topo)),
      model(make_model<float>(cfg.model, cfg.train.batch_size, cfg.train.seq_len)),
      engine(cfg, topo, *comm, *model) {
  model->set_precision(cfg.train.precision);
  if (cfg.train.threads > 0) {
    set_gemm_threads(cfg.train.threads);
    set_kernel_threads(cfg.train.threads);
  }
  force_batched_kernel(cfg.train.batched_gemm);
  engine.init_weights(uint64_t(cfg.train.seed));
}

StepStats train_step(Run& run, int64_t step, double lr) {
  return run.engine.train_step(step, micro_batches(*run.train, step, run.cfg.train.grad_accum), lr);
}

namespace {

StepRecord metrics_record(int64_t step, const StepStats& st, double lr, double seconds, double wait_s,
                          double tokens) {
  StepRecord r;
  r.step = step;
  r.loss = st.loss;
  r.lr = lr;
  r.grad_norm = st.grad_norm;
  r.tokens_per_s = tokens / seconds;
  r.time_step_s = seconds;
  double comm = 0;
  for (int k = 0; k < kNumKinds; ++k) {
    r.time_collective_s[size_t(k)] = st.bytes.seconds[size_t(k)];
    comm += st.bytes.seconds[size_t(k)];
    const auto b = st.bytes.of(Kind(k));
    r.bytes[size_t(k)] = {b.intra, b.inter};
  }
  r.time_wait_s = wait_s;
  r.time_compute_s = seconds - comm - wait_s;
  r.comm_hidden_fraction = st.bytes.hidden_fraction();
  return r;
}

// The sample printed after training: train.sample_prompt's bytes and
// train.sample_tokens drawn at temperature 1 with the KV cache, cut to what
// fits train.seq_len (the prompt's last seq_len bytes, then as many tokens as fit).
std::string training_sample(Run& run) {
  const auto& t = run.cfg.train;
  std::vector<int32_t> toks(t.sample_prompt.begin(), t.sample_prompt.end());
  for (auto& c : toks) c = int32_t(uint8_t(c));
  if (toks.empty()) toks.push_back('\n');
  if (int(toks.size()) > t.seq_len) toks.erase(toks.begin(), toks.end() - t.seq_len);
  const int n = std::min(t.sample_tokens, t.seq_len + 1 - int(toks.size()));
  if (n < t.sample_tokens) log0("sample: %d tokens fit train.seq_len = %d after the prompt\n", n, t.seq_len);
  CoinStream coins(uint64_t(t.seed));
  const auto more = generate(
      *run.model, [&](const std::function<void(UnitSource<float>&)>& f) { run.engine.inference_pass(f); },
      {toks}, n, SamplingRule{}, coins, [](int, int32_t) {});
  toks.insert(toks.end(), more[0].begin(), more[0].end());
  return decode_bytes(toks);
}

// A run's pace: the rates of the step line and the steady-state mean, which
// leaves out the run's first step (its warm-up).
class Throughput {
 public:
  Throughput(const Config& cfg, double tokens_per_step)
      : steps_(cfg.train.steps),
        tokens_(tokens_per_step),
        flops_per_token_(3 * forward_flops_per_token(cfg.model, cfg.train.seq_len)) {}
  void add(double seconds, bool steady) {
    last_s_ = seconds;
    if (!steady) return;
    steady_s_ += seconds;
    ++steady_n_;
  }
  double last_step_s() const { return last_s_; }
  StepLine line(int64_t step, const StepStats& st, double lr, double elapsed_s, double eta_s) const {
    return {step,
            steps_,
            st.loss,
            lr,
            st.grad_norm,
            last_s_ * 1e3,
            tokens_ / last_s_,
            flops_per_token_ * tokens_ / last_s_ * 1e-9,
            st.inter_node_bytes_all * 1e-6,
            st.bytes.hidden_fraction(),
            elapsed_s,
            eta_s};
  }
  // "steady state: ..." after the loop; "" when no step after the first ran.
  std::string steady_line() const {
    if (steady_n_ == 0) return "";
    const double n = double(steady_n_);
    char buf[200];
    std::snprintf(
        buf, sizeof buf,
        "steady state: %.1f ms/step | %.0f tok/s | %.1f GFLOP/s (mean of %lld steps after the first)",
        steady_s_ / n * 1e3, tokens_ * n / steady_s_, flops_per_token_ * tokens_ * n / steady_s_ * 1e-9,
        (long long)steady_n_);
    return buf;
  }

 private:
  int64_t steps_;
  double tokens_, flops_per_token_;
  double last_s_ = 0, steady_s_ = 0;
  int64_t steady_n_ = 0;
};

// The validation loss: every train.val_every steps before the last, and once
// at the end, on train.val_batches micro-batches per rank (none without data.val).
class Validation {
 public:
  Validation(const DataLoader* val, const TrainConfig& t, Engine& engine, MetricsWriter& metrics)
      : val_(val),
        every_(t.val_every),
        batches_(t.val_batches),
        steps_(t.steps),
        engine_(engine),
        metrics_(metrics) {}
  // After step `done` (counted from 1), on every rank alike.
  void after_step(int64_t done) {
    if (!val_ || every_ <= 0 || done % every_ != 0 || done >= steps_) return;
    const double loss = loss_now();
    metrics_.append_validation(done, loss);
    log0("val step %lld | loss %.4f\n", (long long)done, loss);
  }
  // After the last step; recorded unless the run resumed at its end (metrics.h5
  // holds it from the run that got there).
  void at_end(int64_t resumed_from) {
    if (!val_) return;
    const double loss = loss_now();
    if (resumed_from < steps_) {
      metrics_.append_validation(steps_, loss);
      metrics_.flush();
    }
    log0("val final | step %lld | loss %.4f\n", (long long)steps_, loss);
  }

 private:
  double loss_now() { return engine_.eval_loss(validation_batches(*val_, batches_)); }
  const DataLoader* val_;
  int every_, batches_;
  int64_t steps_;
  Engine& engine_;
  MetricsWriter& metrics_;
};

}  // namespace

int run_training(const Config& cfg, const std::string& deck_path, const std::string& resume, bool overwrite,
                 const std::string& init_from) {
  const auto& t = cfg.train;
  RunStart start(cfg, resume, overwrite);
  Run run(cfg);
  const Topology& topo = run.topo;
  Engine& engine = run.engine;
  log_table("zeropp training",
            startup_rows(cfg, deck_path, topo, engine, run.memory, *run.comm, *run.device));
  if (const std::string w = blas_core_warning(); !w.empty()) log0("warning: %s\n", w.c_str());
  log0("resolved configuration (also in %s/config.toml):\n%s\n", t.out_dir.c_str(), to_toml(cfg).c_str());
  const ResumePoint from =
      resume.empty() ? ResumePoint{} : resume_run(topo, engine, run.model->describe(), cfg, resume);
  if (!init_from.empty()) init_from_checkpoint(topo, engine, run.model->describe(), cfg, init_from);
  const double tokens_per_step = double(t.batch_size) * t.seq_len * t.grad_accum * topo.P;
  int64_t tokens_seen = from.tokens_seen;
  // Only now, with every check passed and the checkpoint loaded, is the folder written.
  RunSession session(start, topo, *run.comm, run.world, engine, to_toml(cfg), from, "train.log", "step",
                     [&](int64_t step) {
                       return SavePoint{step, tokens_seen, run.train->window_start(step, 0)};
                     });
  MetricsWriter& metrics = session.metrics();
  if (cfg.checkpoint.at_start && from.step == 0) session.save(0);
  Throughput rate(cfg, tokens_per_step);
  Validation validation(run.val.get(), t, engine, metrics);
  ByteCounters last_bytes;  // of the last step this run took
  const double loop_started = MPI_Wtime();
  for (int64_t step = from.step; step < t.steps; ++step) {
    // Step boundary: commit an asynchronous save every rank has written; stop
    // (after a checkpoint) on a signal or before the time limit would be
    // crossed by the next two steps.
    if (session.stop_before(step, rate.last_step_s())) return kExitStopped;
    const double lr = learning_rate(cfg.optim, step, t.steps);
    const double t0 = MPI_Wtime();
    const StepStats st = train_step(run, step, lr);
    const double t1 = MPI_Wtime();
    ZCHECK_MPI(MPI_Barrier(topo.world.get()));  // the step ends when the slowest rank is done
    const double dt = MPI_Wtime() - t0;
    rate.add(dt, step > from.step);  // the first step pays for warm-up: kept out of the mean
    last_bytes = st.bytes;
    tokens_seen += int64_t(tokens_per_step);
    // Steps count from 1 in metrics.h5, the log and checkpoint names alike.
    metrics.append(metrics_record(step + 1, st, lr, dt, dt - (t1 - t0), tokens_per_step));
    if ((step + 1) % cfg.log.every == 0 || step + 1 == t.steps) {
      const double eta = eta_seconds(MPI_Wtime() - loop_started, step + 1 - from.step, t.steps - step - 1);
      log0("%s\n", format_step(rate.line(step + 1, st, lr, MPI_Wtime() - start.started, eta)).c_str());
    }
    // loss and norm are all-reduced: every rank takes this branch together.
    // The weights just took a non-finite step: nothing more is saved.
    if (!std::isfinite(st.loss) || !std::isfinite(st.grad_norm))
      return session.non_finite(step + 1, st.loss, st.grad_norm);
    validation.after_step(step + 1);
    session.after_step(step + 1);
  }
  session.finish(t.steps);
  validation.at_end(from.step);
  if (from.step < t.steps)  // the same on every rank: all enter the reduction
    log0("%s\n", step_bytes_line(t.steps, last_bytes, topo.world.get()).c_str());
  if (const std::string s = rate.steady_line(); !s.empty()) log0("%s\n", s.c_str());
  if (t.sample_tokens > 0) log0("sample:\n%s\n", training_sample(run).c_str());
  return kExitOk;
}

}  // namespace zeropp
