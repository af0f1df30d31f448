#include "src/run/checkpoint_saver.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>

#include "src/base/logging.hpp"

namespace zeropp {

CheckpointSaver::CheckpointSaver(const Topology& topo, const Config& cfg) : topo_(topo), cfg_(cfg) {
  if (cfg.checkpoint.async) writer_ = std::make_unique<AsyncCheckpointWriter>(topo.world.get());
}

std::string CheckpointSaver::save(const ShardGroups& shards, const SavePoint& at) {
  if (!writer_) return save_checkpoint(topo_, shards, cfg_, at);
  const int64_t step = at.step;
  at_step_boundary();
  if (writer_->in_flight()) {
    log0("checkpoint: step %lld waits for the save of step %lld, still being written\n", (long long)step,
         (long long)step_in_flight_);
    wait_and_commit(true);
  }
  arm_checkpoint_fault(cfg_, step);
  const double t0 = MPI_Wtime();
  const CheckpointDeadline deadline(topo_, cfg_, "checkpoint save of step " + std::to_string(step));
  writer_->start(checkpoint_dir(cfg_), checkpoint_name(step), shards, checkpoint_meta(topo_, cfg_, at),
                 cfg_.checkpoint.keep,
                 [step](const ShardGroups& snapshot) { return non_finite_refusal(snapshot, step, true); });
  step_in_flight_ = step;
  started_at_ = t0;
  blocked_in_flight_ = MPI_Wtime() - t0;
  waited_in_flight_ = 0;
  return checkpoint_dir(cfg_) + "/" + checkpoint_name(step);
}

void CheckpointSaver::at_step_boundary() {
  if (!writer_ || !writer_->in_flight()) return;
  const double t0 = MPI_Wtime();
  bool committed = false;
  {
    const CheckpointDeadline deadline(topo_, cfg_, in_flight_what());
    committed = writer_->advance();
  }
  blocked_in_flight_ += MPI_Wtime() - t0;
  if (committed) committed_save();
}

void CheckpointSaver::finish() {
  if (writer_ && writer_->in_flight()) wait_and_commit(false);
}

void CheckpointSaver::wait_and_commit(bool count_wait) {
  // The main thread's own part of the phases left is a few small
  // collectives: the time is that of waiting for the threads.
  const double t0 = MPI_Wtime();
  {
    const CheckpointDeadline deadline(topo_, cfg_, in_flight_what());
    writer_->finish();
  }
  waited_in_flight_ = MPI_Wtime() - t0;
  if (count_wait) {
    ++waits_;
    waited_s_ += waited_in_flight_;
  }
  committed_save();
}

void CheckpointSaver::committed_save() {
  clear_checkpoint_fault();
  ++saves_;
  blocked_s_ += blocked_in_flight_;
  max_blocked_s_ = std::max(max_blocked_s_, blocked_in_flight_);
  log0(
      "checkpoint: step %lld saved to %s/%s in %.2f s (asynchronously; training blocked %.3f s, waited %.3f "
      "s)\n",
      (long long)step_in_flight_, checkpoint_dir(cfg_).c_str(), checkpoint_name(step_in_flight_).c_str(),
      MPI_Wtime() - started_at_, blocked_in_flight_, waited_in_flight_);
  step_in_flight_ = -1;
}

std::string CheckpointSaver::in_flight_what() const {
  return "asynchronous checkpoint save of step " + std::to_string(step_in_flight_);
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
