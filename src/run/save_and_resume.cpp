#include "src/run/save_and_resume.hpp"

#include <cstdio>

#include "io/checkpoint/checkpoint.hpp"
#include "io/checkpoint/resume_choice.hpp"
#include "src/base/errors.hpp"
#include "src/base/logging.hpp"
#include "src/comm/watchdog.hpp"
#include "src/run/build_info.hpp"
#include "src/run/non_finite.hpp"
#include "src/zero/optimizer.hpp"
#include "src/zero/zero_layout.hpp"

namespace zeropp {

namespace {

std::string zero_section(const Config& c) {
  const std::string all = to_toml(c);
  const auto b = all.find("[zero]");
  return all.substr(b, all.find("\n[", b + 1) - b);
}

// Refuses (Error) a checkpoint whose model differs from the deck's.
// `what`: "resume" or "init-from"; the message says "refusing to <what> a different model".
// The saved deck's model against this run's, from the models' own descriptions.
void check_same_model(const ModelConfig& saved, const ModelDescription& now, const std::string& path,
                      const std::string& what) {
  const std::string differs = identity_differences(describe_model(saved), now);
  if (!differs.empty())
    throw Error(what + ": " + path + " holds another model (" + differs + "): refusing to " + what +
                " a different model");
}

// The deadline's line: what stalled, the limit, where the last complete checkpoint is.
std::string stall_line(const Topology& topo, const Config& cfg, const std::string& what) {
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g", cfg.checkpoint.timeout_s);
  return "zeropp: rank " + std::to_string(topo.rank) + ": " + what + " did not complete within " + limit +
         " s (checkpoint.timeout_s: a rank or node lost inside its collective I/O?); exiting, the last "
         "complete checkpoint stays in " +
         checkpoint_dir(cfg);
}

}  // namespace

CheckpointDeadline::CheckpointDeadline(const Topology& topo, const Config& cfg, const std::string& what)
    : Deadline(cfg.checkpoint.timeout_s + report_delay(topo.rank, topo.X, cfg.checkpoint.timeout_s),
               stall_line(topo, cfg, what), kExitError, End::kAbort) {}

CheckpointMeta checkpoint_meta(const Topology& topo, const Config& cfg, const SavePoint& at) {
  const int64_t step = at.step;
  CheckpointMeta meta;
  meta.step = step;
  meta.tokens_seen = at.tokens_seen;
  meta.seed = uint64_t(cfg.train.seed);
  meta.deck_toml = to_toml(cfg);
  meta.zero_toml = zero_section(cfg);
  meta.code_version = version_line();
  meta.world_size = topo.P;
  meta.ranks_per_node = topo.X;
  meta.nodes = topo.Y;
  // For the record (and for readers without our code): the schedule and the
  // data position are functions of the step, written out as they stand.
  const auto& o = cfg.optim;
  meta.scalars.push_back({"lr_schedule", {o.lr, o.min_lr, double(o.warmup_steps), double(cfg.train.steps)}});
  meta.scalars.push_back({"lr_next", {learning_rate(o, step, cfg.train.steps)}});
  meta.scalars.push_back({"data_next_window_rank0", {double(at.data_next_window)}});
  meta.words.push_back({"rng_seed", {uint64_t(cfg.train.seed)}});
  return meta;
}

std::optional<std::string> non_finite_refusal(const ShardGroups& shards, int64_t step, bool on_host) {
  if (const auto bad = on_host ? first_non_finite_on_host(shards) : first_non_finite(shards))
    return "checkpoint step " + std::to_string(step) + ": refusing to save non-finite values (" + *bad +
           " is not finite)";
  return std::nullopt;
}

void arm_checkpoint_fault(const Config& cfg, int64_t step) {
  const auto& c = cfg.checkpoint;
  if (c.fault_kill_rank >= 0 && step == c.fault_kill_step)
    set_checkpoint_fault(c.fault_kill_rank, c.fault_kill_after, c.fault_stall);
}

std::string save_checkpoint(const Topology& topo, const ShardGroups& shards, const Config& cfg,
                            const SavePoint& at) {
  const int64_t step = at.step;
  const CheckpointMeta meta = checkpoint_meta(topo, cfg, at);
  arm_checkpoint_fault(cfg, step);
  const CheckpointDeadline deadline(topo, cfg, "checkpoint save of step " + std::to_string(step));
  collectively(topo.world.get(), [&] {
    if (const auto refusal = non_finite_refusal(shards, step, false)) throw Error(*refusal);
  });
  const double t0 = MPI_Wtime();
  write_checkpoint(topo.world.get(), checkpoint_dir(cfg), checkpoint_name(step), shards, meta,
                   cfg.checkpoint.keep);
  clear_checkpoint_fault();
  log0("checkpoint: step %lld saved to %s/%s in %.2f s\n", (long long)step, checkpoint_dir(cfg).c_str(),
       checkpoint_name(step).c_str(), MPI_Wtime() - t0);
  return checkpoint_dir(cfg) + "/" + checkpoint_name(step);
}

ResumePoint resume_run(const Topology& topo, Engine& engine, const ModelDescription& model, const Config& cfg,
                       const std::string& which) {
  ResumePoint rp;
  const CheckpointDeadline deadline(topo, cfg, "resume from a checkpoint");
  const ResumeChoice choice = choose_resume_checkpoint(topo.world.get(), which, checkpoint_dir(cfg));
  for (const auto& s : choice.skipped) log0("resume: skipped %s\n", s.c_str());
  rp.path = choice.path;
  if (rp.path.empty()) {
    log0("resume: no checkpoint in %s: starting from step 0\n", checkpoint_dir(cfg).c_str());
    return rp;
  }
  // The saved deck decides what may change.
  const CheckpointMeta saved = read_checkpoint(topo.world.get(), rp.path, {});
  const Config old = parse_config_text(saved.deck_toml, rp.path + " (saved deck)");
  check_same_model(old.model, model, rp.path, "resume");
  for (const auto& d : config_differences(old, cfg))
    log0("resume: changed since the checkpoint: %s\n", d.c_str());
  if (saved.world_size != topo.P || saved.ranks_per_node != topo.X)
    log0("resume: resharding from P=%d X=%d to %s\n", saved.world_size, saved.ranks_per_node,
         topo.describe().c_str());
  const std::string ef_now = engine.error_feedback_layout();
  const std::string ef_saved = error_feedback_layout(old.zero, saved.world_size, saved.ranks_per_node);
  const bool same_ef = !ef_now.empty() && ef_saved == ef_now;
  if (!ef_now.empty() && !same_ef)
    log0("resume: qgZ error feedback restarts from zero (saved: %s; now: %s)\n",
         ef_saved.empty() ? "none" : ef_saved.c_str(), ef_now.c_str());
  const CheckpointMeta meta = read_checkpoint(topo.world.get(), rp.path, engine.checkpoint_shards(same_ef));
  engine.weights_loaded();
  rp.step = meta.step;
  rp.tokens_seen = meta.tokens_seen;
  log0("resume: step %lld from %s\n", (long long)rp.step, rp.path.c_str());
  return rp;
}

int64_t load_model_weights(const Topology& topo, Engine& engine, const ModelDescription& model,
                           const Config& cfg, const std::string& path, const std::string& what) {
  MPI_Comm world = topo.world.get();
  const CheckpointDeadline deadline(topo, cfg, "reading the weights of " + path);
  const CheckpointMeta saved = read_checkpoint(world, path, {});
  check_same_model(parse_config_text(saved.deck_toml, path + " (saved deck)").model, model, path, what);
  ShardGroups shards;  // the weights only: the moments stay zero
  for (auto& g : engine.checkpoint_shards(false))
    if (g.first == "model") shards.push_back(std::move(g));
  read_checkpoint(world, path, shards);
  engine.weights_loaded();
  return saved.step;
}

void init_from_checkpoint(const Topology& topo, Engine& engine, const ModelDescription& model,
                          const Config& cfg, const std::string& path) {
  const int64_t step = load_model_weights(topo, engine, model, cfg, path, "init from");
  log0("init-from: model weights from %s (saved at step %lld); starting at step 0 with a fresh optimizer\n",
       path.c_str(), (long long)step);
}

}  // namespace zeropp
