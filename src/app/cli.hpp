// The zeropp command line (CLI11): each command is a file of src/app/commands/
// behind the interface of command.hpp.
//
//   zeropp train DECK.toml [--section.key=value ...]
//   zeropp generate|eval CHECKPOINT ...      zeropp rlhf DECK.toml ...
//   zeropp prepare-data ...                  zeropp tokenizer train ...
//   zeropp ckpt info|verify|import|export    zeropp bench step|quant|collectives|generate
//   zeropp help keys                         zeropp --version
//
// Every rank parses the same arguments; only rank 0 prints help and errors.
#pragma once

namespace zeropp {

// Runs the command; returns the process exit status. Expects MPI and Kokkos
// to be initialised.
int run_cli(int argc, char** argv);

}  // namespace zeropp
