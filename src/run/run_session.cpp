#include "src/run/run_session.hpp"

#include <mpi.h>

#include "io/files/run_dir.hpp"
#include "src/base/errors.hpp"
#include "src/run/build_info.hpp"
#include "src/run/non_finite.hpp"

namespace zeropp {

namespace {

RunFolderUse folder_use(const std::string& resume, bool overwrite) {
  if (!resume.empty()) return RunFolderUse::Resume;
  return overwrite ? RunFolderUse::Overwrite : RunFolderUse::New;
}

}  // namespace

RunStart::RunStart(const Config& c, const std::string& r, bool overwrite)
    : cfg(c), resume(r), use(folder_use(r, overwrite)), started(MPI_Wtime()) {
  collectively(MPI_COMM_WORLD, [&] {
    if (world_rank() == 0) check_run_folders(cfg, use);
  });
}

RunSession::RunSession(RunStart& start, const Topology& topo, Communicator& comm, Group& world,
                       Engine& engine, const std::string& deck_toml, const ResumePoint& from,
                       const std::string& log_name, const char* unit, SavePointOf point)
    : start_(start),
      comm_(comm),
      world_(world),
      engine_(engine),
      unit_(unit),
      point_(std::move(point)),
      from_step_(from.step),
      last_saved_(from.path),
      saver_(topo, start.cfg) {
  const std::string& dir = start_.cfg.train.out_dir;
  collectively(topo.world.get(), [&] {
    if (topo.rank != 0) return;
    if (start.use == RunFolderUse::Overwrite) remove_previous_run(start_.cfg);
    make_run_dir(dir);
    write_text_atomic(dir, "config.toml", deck_toml);
    start.log.open(dir + "/" + log_name, !start.resume.empty());
  });
  MetricsOptions o;
  o.resume = !from.path.empty();
  o.resume_step = from.step;
  metrics_ = std::make_unique<MetricsWriter>(
      topo.world.get(), dir, RunInfo{deck_toml, topo.P, topo.X, topo.Y, version_line(), {}}, o);
}

void RunSession::save(int64_t n) {
  last_saved_ = saver_.save(engine_.checkpoint_shards(true), point_(n));
  saved_at_ = n;
}

bool RunSession::stop_before(int64_t n, double last_step_s) {
  saver_.at_step_boundary();
  const char* why = stop_reason(comm_, world_, start_.started, last_step_s, start_.cfg.train.max_runtime);
  if (!why) return false;
  metrics_->flush();
  if (saved_at_ != n) save(n);
  saver_.finish();
  log0("stopping at %s %lld (%s); resume with --resume auto\n", unit_, (long long)n, why);
  return true;
}

void RunSession::after_step(int64_t n) {
  if (start_.cfg.checkpoint.every > 0 && n % start_.cfg.checkpoint.every == 0) save(n);
}

int RunSession::non_finite(int64_t n, double loss, double grad_norm) {
  saver_.finish();
  metrics_->flush();
  if (world_rank() == 0) print_error(non_finite_message(n, loss, grad_norm, last_saved_));
  return kExitNonFinite;
}

void RunSession::finish(int64_t end) {
  metrics_->flush();
  if (start_.cfg.checkpoint.at_end && saved_at_ != end && from_step_ < end) save(end);
  saver_.finish();
  if (const std::string s = saver_.summary(); !s.empty()) log0("%s\n", s.c_str());
}

}  // namespace zeropp
