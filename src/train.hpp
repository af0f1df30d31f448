// The training loop: deck -> config -> this loop -> engine -> model/kernels.
//
// Builds the topology, loaders, model and engine, prints the start-up table,
// runs the optimizer steps with one log line each, validates every
// train.val_every steps and at the end, and prints a generated sample.
#pragma once

#include <string>

#include "src/config.hpp"

namespace zeropp {

// Returns the process exit status. Collective over MPI_COMM_WORLD.
int run_training(const Config& cfg, const std::string& deck_path);

}  // namespace zeropp
