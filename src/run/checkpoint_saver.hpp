// The saves of a training loop: synchronous (save_checkpoint), or with
// checkpoint.async = true asynchronous (io/checkpoint/checkpoint_async.hpp): the loop
// goes on while background threads create, write and commit the file, and
// the save moves from one phase to the next at the step boundaries.
//
// At most one save is in flight: a new one first finishes the previous one,
// says so and counts the wait. The loop finishes the save in flight before
// it stops (a signal, the time limit, a non-finite loss) and at the end of
// the run, so the run's last checkpoint is complete when it exits.
// All calls are collective over the topology's world, at the same points on
// every rank, each under checkpoint.timeout_s (CheckpointDeadline).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "io/checkpoint/checkpoint_async.hpp"
#include "src/run/save_and_resume.hpp"

namespace zeropp {

class CheckpointSaver {
 public:
  CheckpointSaver(const Topology& topo, const Config& cfg);
  CheckpointSaver(const CheckpointSaver&) = delete;
  CheckpointSaver& operator=(const CheckpointSaver&) = delete;

  // Saves `shards` (Engine::checkpoint_shards) after at.step steps; returns
  // the checkpoint's path (written by the time finish() returns). Errors as
  // save_checkpoint's; an asynchronous save's refusal of non-finite values
  // comes from the commit.
  std::string save(const ShardGroups& shards, const SavePoint& at);
  // At a step boundary: moves the save in flight on to its next phase once
  // every rank's thread is done with this one (one small all-reduce per step
  // while one is in flight, io/checkpoint/checkpoint_async.hpp).
  void at_step_boundary();
  // Waits for the save in flight, if any, and commits it.
  void finish();
  // "checkpoint: 3 asynchronous saves, blocking ..." for the end of the run;
  // "" without asynchronous saves.
  std::string summary() const;

 private:
  void wait_and_commit(bool count_wait);  // the save in flight: waits (timed) for it
  void committed_save();                  // counts and logs it
  std::string in_flight_what() const;     // "asynchronous checkpoint save of step N"

  const Topology& topo_;
  const Config& cfg_;
  std::unique_ptr<AsyncCheckpointWriter> writer_;  // null: synchronous saves
  int64_t step_in_flight_ = -1;
  // MPI_Wtime of its start; blocking and waiting so far.
  double started_at_ = 0, blocked_in_flight_ = 0, waited_in_flight_ = 0;
  // Totals over the committed asynchronous saves.
  int64_t saves_ = 0, waits_ = 0;
  double blocked_s_ = 0, waited_s_ = 0, max_blocked_s_ = 0;
};

}  // namespace zeropp
