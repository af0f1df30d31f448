// One `zeropp` command behind the interface run_cli calls. A command's
// constructor declares its arguments on its own CLI11 subcommand (under the
// program, or under a group such as `ckpt` or `bench`) and holds the values they
// parse into; run() executes it once that subcommand was chosen. Every rank
// parses the same arguments and runs the same command; how the ranks share a
// command's work is the command's own (rank 0 alone reads and writes files for
// the conversions, every rank trains).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

namespace zeropp {

class Command {
 public:
  virtual ~Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;
  bool chosen() const { return bool(*sub_); }
  virtual int run() = 0;  // the process exit status

 protected:
  explicit Command(CLI::App* sub) : sub_(sub) {}
  // The deck overrides: CLI11 leaves unknown "--section.key[=value]" arguments as extras.
  std::vector<std::string> overrides() const { return sub_->remaining(); }
  CLI::App* sub_;
};

using Commands = std::vector<std::unique_ptr<Command>>;

// One file per command (src/app/commands/), each adding its commands under `app`.
void add_train_command(CLI::App& app, Commands& out);   // train
void add_rlhf_command(CLI::App& app, Commands& out);    // rlhf
void add_serve_commands(CLI::App& app, Commands& out);  // generate, eval
void add_data_commands(CLI::App& app, Commands& out);   // prepare-data, tokenizer train
void add_ckpt_command(CLI::App& app, Commands& out);    // ckpt info|verify|import|export
void add_bench_command(CLI::App& app, Commands& out);   // bench step|quant|collectives|generate
void add_help_command(CLI::App& app, Commands& out);    // help keys

}  // namespace zeropp
