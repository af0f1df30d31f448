// The training loop: deck -> config -> this loop -> engine -> model/kernels.
//
// Builds the topology, loaders, model and engine, prints the start-up table,
// runs the optimizer steps with one log line each, validates every
// train.val_every steps and at the end, and prints a generated sample.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/data/data_loader.hpp"
#include "src/comm/communicator.hpp"
#include "src/comm/topology.hpp"
#include "src/config/config.hpp"
#include "src/models/model.hpp"
#include "src/run/device_run.hpp"
#include "src/run/micro_batches.hpp"
#include "src/run/preflight.hpp"
#include "src/zero/engine.hpp"

namespace zeropp {

// Everything a run holds, built in dependency order; the engine refers to
// the topology, communicator and model, so a Run is never moved.
struct Run {
  const Config& cfg;  // outlives the Run (the engine refers to it too)
  Topology topo;
  std::unique_ptr<DataLoader> train, val;  // val: null without validation
  MemoryCheck memory;                      // checked before the model and the engine allocate
  std::unique_ptr<DeviceRun> device;       // train.device's GPU: outlives the engine's buffers
  std::unique_ptr<Communicator> comm;      // comm.backend's (src/comm/make_communicator.hpp)
  Group world;                             // for the loop's own small collectives (stop flag)
  std::unique_ptr<Model<float>> model;     // model.family's
  Engine engine;

  // Checks the inputs on every rank (one agreed error) and the memory
  // `estimate` says the run needs, then builds and initialises. Writes nothing.
  using MemoryEstimator = MemoryEstimate (*)(const Config& cfg, int P, int X);
  explicit Run(const Config& cfg, MPI_Comm base = MPI_COMM_WORLD, MemoryEstimator estimate = estimate_memory);
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;
};

// One optimizer step of `run` at learning rate lr: the loop reads the
// step's micro-batches and hands them to the engine.
StepStats train_step(Run& run, int64_t step, double lr);

// Returns the process exit status (kExitStopped after a signal or the time
// limit). Collective over MPI_COMM_WORLD. resume: "" (start at step 0),
// "auto" or a checkpoint file. A train.out_dir that holds a previous run is
// refused unless resuming or `overwrite`; nothing is written before the
// resume has succeeded. init_from: a checkpoint whose model weights start a
// new run (fine-tuning: step 0, fresh optimizer; not with resume).
int run_training(const Config& cfg, const std::string& deck_path, const std::string& resume = "",
                 bool overwrite = false, const std::string& init_from = "");

}  // namespace zeropp
