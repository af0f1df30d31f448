// What `zeropp train` and `zeropp rlhf` both stand on around their loops, in
// the order a run takes it:
//   1. RunStart, before anything is built: the run folders checked (a refused
//      start touches nothing), the stop signals installed, the clock started,
//      rank 0's output kept for the run's log from the start-up table on;
//   2. RunSession, once the command has built its engine and loaded any
//      checkpoint: the run folder written, its log and metrics.h5 opened, the
//      checkpoint saver; it is destroyed before the engine and communicator;
//   3. at each step boundary: stop_before() (a signal or the time limit: save,
//      finish, stop), after_step() (checkpoint.every), non_finite();
//   4. finish(): checkpoint.at_end and the save in flight.
// Each loop counts its own steps (training steps, RLHF iterations) and says
// what a checkpoint after n of them records (SavePointOf). Everything is
// collective over the topology's world, at the same points on every rank.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "io/files/metrics.hpp"
#include "src/base/logging.hpp"
#include "src/comm/communicator.hpp"
#include "src/run/checkpoint_saver.hpp"
#include "src/run/preflight.hpp"
#include "src/run/save_and_resume.hpp"
#include "src/run/stop_signals.hpp"

namespace zeropp {

class RunStart {
 public:
  // Collective over MPI_COMM_WORLD. resume: "" (a new run), "auto" or a
  // checkpoint; overwrite: start over in a folder that holds a previous run.
  // Refuses (Error on every rank) folders the run cannot use.
  RunStart(const Config& cfg, const std::string& resume, bool overwrite);
  RunStart(const RunStart&) = delete;
  RunStart& operator=(const RunStart&) = delete;

  const Config& cfg;
  const std::string resume;
  const RunFolderUse use;
  const double started;  // MPI_Wtime
  LogFile log;           // opened in the run folder by RunSession

 private:
  StopSignals signals_;
};

class RunSession {
 public:
  using SavePointOf = std::function<SavePoint(int64_t steps)>;

  // Writes the run folder (config.toml holds deck_toml; the log is log_name)
  // and opens metrics.h5, continued after from.step. `unit` names a step in
  // the stop line ("step", "iteration").
  RunSession(RunStart& start, const Topology& topo, Communicator& comm, Group& world, Engine& engine,
             const std::string& deck_toml, const ResumePoint& from, const std::string& log_name,
             const char* unit, SavePointOf point);
  RunSession(const RunSession&) = delete;
  RunSession& operator=(const RunSession&) = delete;

  MetricsWriter& metrics() { return *metrics_; }

  // A checkpoint after n steps now (written by the time finish() or the next save returns).
  void save(int64_t n);
  // Before step n+1, n steps done: commits an asynchronous save every rank has
  // written; on a signal or before the time limit (last_step_s: the last
  // step's seconds), saves after n steps, finishes, says why and returns true.
  bool stop_before(int64_t n, double last_step_s);
  // After n steps: checkpoint.every's save.
  void after_step(int64_t n);
  // The loss or the gradient norm of step n is not finite: finishes the save in
  // flight (it holds the weights from before) and prints the line naming the last
  // good checkpoint. Returns the exit status.
  int non_finite(int64_t n, double loss, double grad_norm);
  // The loop ran to `end` steps: checkpoint.at_end's save, the save in flight,
  // the asynchronous saves' summary.
  void finish(int64_t end);

 private:
  const RunStart& start_;
  Communicator& comm_;
  Group& world_;
  Engine& engine_;
  const char* unit_;
  SavePointOf point_;
  int64_t from_step_, saved_at_ = -1;
  std::string last_saved_;  // for the line when the loss turns non-finite
  std::unique_ptr<MetricsWriter> metrics_;
  CheckpointSaver saver_;
};

}  // namespace zeropp
