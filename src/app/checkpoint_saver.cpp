#include "src/app/checkpoint_saver.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>

#include "src/app/logging.hpp"

namespace zeropp {

CheckpointSaver::CheckpointSaver(const Topology& topo, const Config& cfg) : topo_(topo), cfg_(cfg) {
  if (cfg.checkpoint.async) writer_ = std::make_unique<AsyncCheckpointWriter>(topo.world.get());
}

std::string CheckpointSaver::save(const ShardGroups& shards, const SavePoint& at) {
  if (!writer_) return save_checkpoint(topo_, shards, cfg_, at);
  const int64_t step = at.step;
  if (writer_->in_flight()) {
    const bool ready = writer_->all_written();
    if (!ready)
      log0("checkpoint: step %lld waits for the save of step %lld, still being written\n", (long long)step,
           (long long)step_in_flight_);
    commit(!ready);
  }
  arm_checkpoint_fault(cfg_, step);
  const double t0 = MPI_Wtime();
  writer_->start(checkpoint_dir(cfg_), checkpoint_name(step), shards, checkpoint_meta(topo_, cfg_, at),
                 cfg_.checkpoint.keep,
                 [step](const ShardGroups& snapshot) { return non_finite_refusal(snapshot, step, true); });
  step_in_flight_ = step;
  started_at_ = t0;
  blocked_in_flight_ = MPI_Wtime() - t0;
  return checkpoint_dir(cfg_) + "/" + checkpoint_name(step);
}

void CheckpointSaver::at_step_boundary() {
  if (!writer_ || !writer_->in_flight()) return;
  const double t0 = MPI_Wtime();
  const bool ready = writer_->all_written();
  blocked_in_flight_ += MPI_Wtime() - t0;
  if (ready) commit(false);
}

void CheckpointSaver::finish() {
  if (writer_ && writer_->in_flight()) commit(false);
}

void CheckpointSaver::commit(bool waiting) {
  const double t0 = MPI_Wtime();
  writer_->wait();
  const double t1 = MPI_Wtime();
  if (waiting) {
    ++waits_;
    waited_s_ += t1 - t0;
  }
  writer_->finish();
  clear_checkpoint_fault();
  const double blocked = blocked_in_flight_ + (MPI_Wtime() - t1);
  ++saves_;
  blocked_s_ += blocked;
  max_blocked_s_ = std::max(max_blocked_s_, blocked);
  log0(
      "checkpoint: step %lld saved to %s/%s in %.2f s (asynchronously; training blocked %.3f s, waited %.3f "
      "s)\n",
      (long long)step_in_flight_, checkpoint_dir(cfg_).c_str(), checkpoint_name(step_in_flight_).c_str(),
      MPI_Wtime() - started_at_, blocked, t1 - t0);
  step_in_flight_ = -1;
}

std::string CheckpointSaver::summary() const {
  if (saves_ == 0) return "";
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "checkpoint: %lld asynchronous saves, training blocked %.1f ms per save (at most %.1f ms); "
                "%lld waited for the previous save (%.2f s in all)",
                (long long)saves_, blocked_s_ / double(saves_) * 1e3, max_blocked_s_ * 1e3, (long long)waits_,
                waited_s_);
  return buf;
}

}  // namespace zeropp
