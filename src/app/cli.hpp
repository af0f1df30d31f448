// The zeropp command line (CLI11): subcommands train, prepare-data, bench.
//
//   zeropp train DECK.toml [--section.key=value ...]
//   zeropp prepare-data --input TEXT --out-dir DIR [--val-fraction 0.05]
//   zeropp bench step DECK.toml [--steps N] [--section.key=value ...]
//   zeropp --version
//
// Every rank parses the same arguments; only rank 0 prints help and errors.
#pragma once

namespace zeropp {

// Runs the command; returns the process exit status. Expects MPI and Kokkos
// to be initialised.
int run_cli(int argc, char** argv);

}  // namespace zeropp
