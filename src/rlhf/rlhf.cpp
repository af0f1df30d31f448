#include "src/rlhf/rlhf.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>

#include "io/files/metrics.hpp"
#include "src/base/errors.hpp"
#include "src/base/logging.hpp"
#include "src/generate/sampler.hpp"
#include "src/rlhf/policy_gradient.hpp"
#include "src/rlhf/reward.hpp"
#include "src/rlhf/rollout.hpp"
#include "src/run/micro_batches.hpp"
#include "src/run/run_session.hpp"
#include "src/run/save_and_resume.hpp"
#include "src/run/startup_rows.hpp"
#include "src/train/train.hpp"

namespace zeropp {

Config rlhf_engine_config(const Config& cfg) {
  Config e = cfg;
  const RlhfConfig& r = cfg.rlhf;
  e.train.batch_size = r.batch_size;
  e.train.seq_len = r.prompt_len + r.completion_len - 1;
  e.train.grad_accum = 1;
  e.train.steps = r.iterations;
  e.train.val_batches = 0;
  if (!r.prompts.empty()) e.data.train = r.prompts;
  e.data.val.clear();
  return e;
}

Config rlhf_reference_config(const Config& e) {
  Config c = e;
  c.zero.quantized_weights = true;
  c.zero.weight_bits = 8;
  c.zero.quantized_gradients = false;
  c.zero.gradient_error_feedback = false;
  return c;
}

MemoryEstimate estimate_rlhf_memory(const Config& e, int P, int X) {
  MemoryEstimate m = estimate_memory(e, P, X);
  m.decode = model_decode_bytes(e.model, e.train.batch_size, e.train.seq_len);
  m.reference = estimate_frozen_memory(rlhf_reference_config(e), P, X).total();
  m.batch_keys = "rlhf.batch_size, rlhf.prompt_len or rlhf.completion_len";
  return m;
}

namespace {

// What one iteration measured on this rank.
struct IterationTimes {
  double gather = 0, generate = 0, train = 0, other = 0, total = 0;
};

// Adds the counters of one phase (b) to those of another (a).
void add_counters(ByteCounters& a, const ByteCounters& b) {
  for (int k = 0; k < kNumKinds; ++k) {
    a.seconds[size_t(k)] += b.seconds[size_t(k)];
    for (int p = 0; p < kNumPurposes; ++p) a.sent[size_t(k)][size_t(p)] += b.sent[size_t(k)][size_t(p)];
  }
}

// An iteration's phases on this rank (generation, scoring, the update), the
// time blocked in all-gathers taken out of generation and the update and
// reported on its own; the rest of the iteration is "other".
class IterationClock {
 public:
  explicit IterationClock(ByteCounters& counters) : counters_(counters) {}
  void start() {
    counters_.reset();
    t0_ = MPI_Wtime();
  }
  void generated() {
    generate_s_ = MPI_Wtime() - t0_;
    generate_gather_s_ = counters_.seconds[kGather];
  }
  void update_starts() {
    before_update_ = counters_;  // train_step starts its own count
    t1_ = MPI_Wtime();
  }
  void update_done() { train_s_ = MPI_Wtime() - t1_; }
  // After the iteration's closing barrier; st: the update's statistics.
  IterationTimes finish(const StepStats& st) {
    IterationTimes tm;
    tm.total = MPI_Wtime() - t0_;
    bytes_ = before_update_;
    add_counters(bytes_, st.bytes);
    tm.gather = bytes_.seconds[kGather];
    tm.generate = generate_s_ - generate_gather_s_;
    tm.train = train_s_ - st.bytes.seconds[kGather];
    tm.other = tm.total - tm.gather - tm.generate - tm.train;
    return tm;
  }
  const ByteCounters& bytes() const { return bytes_; }  // the whole iteration's, after finish()

 private:
  static constexpr size_t kGather = size_t(Kind::AllGather);
  ByteCounters& counters_;
  ByteCounters before_update_, bytes_;
  double t0_ = 0, t1_ = 0, generate_s_ = 0, generate_gather_s_ = 0, train_s_ = 0;
};

StepRecord iteration_record(int64_t it, const StepStats& st, const ByteCounters& bytes, double lr,
                            const IterationTimes& t, double generated_tokens) {
  StepRecord r;
  r.step = it;
  r.loss = st.loss;
  r.lr = lr;
  r.grad_norm = st.grad_norm;
  r.tokens_per_s = generated_tokens / t.total;
  r.time_step_s = t.total;
  double comm = 0;
  for (int k = 0; k < kNumKinds; ++k) {
    r.time_collective_s[size_t(k)] = bytes.seconds[size_t(k)];
    comm += bytes.seconds[size_t(k)];
    const auto b = bytes.of(Kind(k));
    r.bytes[size_t(k)] = {b.intra, b.inter};
  }
  r.time_compute_s = t.total - comm;
  return r;
}

// One iteration's batch for the update, from this rank's sampled rows (B rows of
// prompt + completion tokens): the inputs and targets, and REINFORCE's per-token
// weights (returns with the KL in the reward, less the batch-mean baseline over all
// ranks). One all-reduce, which also gives the mean reward and KL; each row's text
// ("prompt | completion") for the log.
struct ScoredBatch {
  MicroBatch mb;
  std::vector<double> reward;
  std::vector<std::string> texts;
  double mean_reward = 0, mean_kl = 0;
};

ScoredBatch score(const std::vector<int32_t>& seqs, Engine& actor, Engine& reference, Communicator& comm,
                  Group& world, const RlhfConfig& r) {
  const int B = r.batch_size, Tp = r.prompt_len, Tc = r.completion_len, T = Tp + Tc - 1;
  ScoredBatch out;
  MicroBatch& mb = out.mb;
  for (int b = 0; b < B; ++b) {
    const auto row = seqs.begin() + long(b) * (T + 1);
    mb.tokens.insert(mb.tokens.end(), row, row + T);
    mb.targets.insert(mb.targets.end(), row + 1, row + T + 1);
  }
  // Both models' log-probabilities of the sampled tokens.
  const std::vector<double> lp_actor = completion_log_probs(actor.token_losses(mb), B, Tp, Tc);
  const std::vector<double> lp_ref = completion_log_probs(reference.token_losses(mb), B, Tp, Tc);
  out.reward.resize(size_t(B));
  for (int b = 0; b < B; ++b) {
    const auto row = seqs.begin() + long(b) * (T + 1);
    const std::string completion = decode_bytes(std::vector<int32_t>(row + Tp, row + T + 1));
    out.reward[size_t(b)] = word_reward(completion, r.reward_word, r.reward_clip);
    out.texts.push_back(decode_bytes(std::vector<int32_t>(row, row + Tp)) + " | " + completion);
  }
  const std::vector<double> G = token_returns(out.reward, lp_actor, lp_ref, r.beta, B, Tc);
  // One all-reduce: the per-position return sums (the baseline), the reward and KL sums.
  std::vector<double> sums = column_sums(G, B, Tc);
  double reward_sum = 0, kl_sum = 0;
  for (double x : out.reward) reward_sum += x;
  for (size_t i = 0; i < lp_actor.size(); ++i) kl_sum += lp_actor[i] - lp_ref[i];
  sums.push_back(reward_sum);
  sums.push_back(kl_sum);
  comm.allreduce_sum(world, sums.data(), int64_t(sums.size()), Purpose::Other, "rlhf sums");
  const double n_seqs = double(B) * world.size();
  std::vector<double> baseline(sums.begin(), sums.begin() + Tc);
  for (double& x : baseline) x /= n_seqs;
  out.mean_reward = sums[size_t(Tc)] / n_seqs;
  out.mean_kl = sums[size_t(Tc) + 1] / (n_seqs * Tc);
  mb.weights = advantage_weights(G, baseline, B, Tp, Tc);
  return out;
}

StartupRows startup_rows(const Config& cfg, const Config& e, const std::string& deck, const Run& run) {
  const RlhfConfig& r = cfg.rlhf;
  char buf[256];
  StartupRows rows = common_startup_rows(deck, run.topo, cfg.model, run.engine.parameters());
  rows.emplace_back("actor", "ZeRO-3 engine, AdamW at rlhf.lr, " +
                                 std::string(deck_name(cfg.zero.comm_dtype)) + " gathers" +
                                 (cfg.zero.quantized_weights ? ", qwZ" : ""));
  rows.emplace_back("reference", "frozen copy of the start, sharded, int8 (qwZ) gathers");
  rows.emplace_back("start", r.init_from.empty() ? "train.seed's initialisation" : r.init_from);
  std::snprintf(buf, sizeof buf, "%d prompts x %d ranks, %d prompt + %d sampled tokens, temperature %g",
                r.batch_size, run.topo.P, r.prompt_len, r.completion_len, r.temperature);
  rows.emplace_back("batch", buf);
  std::snprintf(buf, sizeof buf, "\"%s\" occurrences (at most %d); KL beta %g", r.reward_word.c_str(),
                r.reward_clip, r.beta);
  rows.emplace_back("reward", buf);
  rows.emplace_back("objective", "REINFORCE, per-position batch-mean baseline, KL in the per-token reward");
  rows.emplace_back("prompts", token_file_spec(e.data.train));
  rows.emplace_back("memory per rank", memory_summary(run.memory));
  rows.emplace_back("output", cfg.train.out_dir);
  return rows;
}

// Only rlhf runs need the rows to fit the position table (not a rule of every deck).
void check_row_length(const Config& cfg) {
  const RlhfConfig& r = cfg.rlhf;
  if (r.prompt_len + r.completion_len - 1 > cfg.model.max_seq_len)
    throw Error("invalid configuration: rlhf.completion_len = " + std::to_string(r.completion_len) +
                ": plus rlhf.prompt_len = " + std::to_string(r.prompt_len) +
                " is longer than the position table allows (model.max_seq_len + 1 = " +
                std::to_string(cfg.model.max_seq_len + 1) + ")");
}

// The first Tp tokens of each of B rows of T tokens: an iteration's prompts
// from its windows (a pure function of the iteration).
std::vector<int32_t> first_tokens(const std::vector<int32_t>& windows, int B, int T, int Tp) {
  std::vector<int32_t> prompts(size_t(B) * Tp);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < Tp; ++t) prompts[size_t(b) * Tp + t] = windows[size_t(b) * T + t];
  return prompts;
}

// The iteration's line and rank 0's first sample, on one line.
void log_iteration(int64_t done, int64_t iterations, const ScoredBatch& batch, const StepStats& st,
                   const IterationTimes& tm, double n_seqs, double elapsed_s) {
  log0(
      "iter %lld/%lld | reward %.3f | kl %.4f | pg loss %.4f | norm %.3f | gather %.2f s | "
      "generate %.2f s | train %.2f s | other %.2f s | %.2f samples/s | elapsed %s\n",
      (long long)done, (long long)iterations, batch.mean_reward, batch.mean_kl, st.loss, st.grad_norm,
      tm.gather, tm.generate, tm.train, tm.other, n_seqs / tm.total, format_duration(elapsed_s).c_str());
  std::string text = batch.texts[0];
  std::replace(text.begin(), text.end(), '\n', '/');
  log0("sample (reward %g): %s\n", batch.reward[0], text.c_str());
}

}  // namespace

int run_rlhf(const Config& cfg, const std::string& deck_path, const std::string& resume, bool overwrite) {
  require_host(cfg, "rlhf");
  const RlhfConfig& r = cfg.rlhf;
  const Config e = rlhf_engine_config(cfg);
  const Config ref_cfg = rlhf_reference_config(e);
  const int B = r.batch_size, Tp = r.prompt_len, Tc = r.completion_len, T = Tp + Tc - 1;
  collectively(MPI_COMM_WORLD, [&] { check_row_length(cfg); });
  RunStart start(e, resume, overwrite);
  Run run(e, MPI_COMM_WORLD, estimate_rlhf_memory);
  const Topology& topo = run.topo;
  Engine& actor = run.engine;
  const auto ref_model = make_model<float>(e.model, B, T);
  ref_model->set_precision(e.train.precision);
  Engine reference(ref_cfg, topo, *run.comm, *ref_model, true);  // frozen: no gradients, no Adam moments
  reference.init_weights(uint64_t(e.train.seed));
  log_table("zeropp rlhf", startup_rows(cfg, e, deck_path, run));
  const ResumePoint from =
      resume.empty() ? ResumePoint{} : resume_run(topo, actor, run.model->describe(), e, resume);
  if (!r.init_from.empty()) {
    init_from_checkpoint(topo, reference, ref_model->describe(), e, r.init_from);
    if (from.path.empty()) init_from_checkpoint(topo, actor, run.model->describe(), e, r.init_from);
  }
  RunSession session(start, topo, *run.comm, run.world, actor, to_toml(cfg), from, "rlhf.log", "iteration",
                     [&](int64_t it) {
                       return SavePoint{it, it * int64_t(B) * T * topo.P, run.train->window_start(it, 0)};
                     });
  MetricsWriter& metrics = session.metrics();

  const PassRunner actor_pass = [&](const std::function<void(UnitSource<float>&)>& f) {
    actor.inference_pass(f);
  };
  IterationClock clock(run.comm->counters());
  double last_iteration_s = 0;
  for (int64_t it = from.step; it < r.iterations; ++it) {
    // Iteration boundary: commit and stop as `zeropp train` does (src/run/run_session.hpp).
    if (session.stop_before(it, last_iteration_s)) return kExitStopped;
    clock.start();
    const std::vector<int32_t> prompts = first_tokens(micro_batches(*run.train, it, 1)[0].tokens, B, T, Tp);
    const uint64_t seed =
        uint64_t(e.train.seed) * 0x9E3779B97F4A7C15ull ^ uint64_t(it + 1) << 32 ^ uint64_t(topo.rank) << 52;
    const std::vector<int32_t> seqs =
        sample_completions(*run.model, actor_pass, prompts, B, Tp, Tc, r.temperature, seed);
    clock.generated();
    const ScoredBatch batch = score(seqs, actor, reference, *run.comm, run.world, r);
    clock.update_starts();
    const StepStats st = actor.train_step(it, {batch.mb}, r.lr);
    clock.update_done();
    ZCHECK_MPI(MPI_Barrier(topo.world.get()));
    const IterationTimes tm = clock.finish(st);
    last_iteration_s = tm.total;
    const double n_seqs = double(B) * topo.P;
    metrics.append(iteration_record(it + 1, st, clock.bytes(), r.lr, tm, n_seqs * Tc));
    metrics.append_rlhf({it + 1, batch.mean_reward, batch.mean_kl, tm.gather, tm.generate, tm.train, tm.other,
                         n_seqs / tm.total});
    if ((it + 1) % cfg.log.every == 0 || it + 1 == r.iterations)
      log_iteration(it + 1, r.iterations, batch, st, tm, n_seqs, MPI_Wtime() - start.started);
    if (!std::isfinite(st.loss) || !std::isfinite(st.grad_norm))
      return session.non_finite(it + 1, st.loss, st.grad_norm);
    session.after_step(it + 1);
  }
  session.finish(r.iterations);
  return kExitOk;
}

}  // namespace zeropp
