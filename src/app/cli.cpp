#include "src/app/cli.hpp"

#include <CLI/CLI.hpp>

#include "src/app/command.hpp"
#include "src/base/errors.hpp"
#include "src/base/logging.hpp"
#include "src/comm/topology.hpp"
#include "src/run/build_info.hpp"

namespace zeropp {

namespace {
// How long ranks that raised an Error outside agree_on_error wait for the others to
// raise one too: errors that every rank checks alike arrive together.
constexpr double kUnagreedErrorWait_s = 10;
}  // namespace

int run_cli(int argc, char** argv) {
  const bool root = world_rank() <= 0;
  CLI::App app{"zeropp: GPT training with ZeRO-3 and ZeRO++ (qwZ, hpZ, qgZ) over MPI"};
  app.set_version_flag("--version", [] { return version_text(); });
  app.require_subcommand(1);
  Commands commands;  // in the order `zeropp --help` lists them
  add_train_command(app, commands);
  add_serve_commands(app, commands);
  add_rlhf_command(app, commands);
  add_data_commands(app, commands);
  add_ckpt_command(app, commands);
  add_bench_command(app, commands);
  add_help_command(app, commands);

  // Where ranks that raised an Error outside agree_on_error meet (below).
  MPI_Comm errors = MPI_COMM_NULL;
  ZCHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &errors));
  const UniqueComm owned(errors);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (!root) return e.get_exit_code() == 0 ? kExitOk : kExitUsage;
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }

  try {
    for (const auto& c : commands)
      if (c->chosen()) return c->run();
  } catch (const AgreedError& e) {
    if (e.reporter) print_error(e.line());
    return kExitError;
  } catch (const Error& e) {
    // Outside agree_on_error an Error comes from what every rank checks alike, and rank
    // 0's line says it; unless some rank does not get here, when it is this rank's alone.
    if (!every_rank_raised(errors, kUnagreedErrorWait_s)) abort_on_this_rank(e.what());
    if (root) print_error(e.what());
    return kExitError;
  } catch (const std::exception& e) {
    // Anything else (an allocation, a system call) is this rank's alone.
    abort_on_this_rank(e.what());
  }
  return kExitUsage;
}

}  // namespace zeropp
