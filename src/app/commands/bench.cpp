// `zeropp bench step|quant|collectives|generate DECK`: the benchmarks that run on
// a deck's model and layout (src/bench). Each loads the deck as train does.
#include "src/bench/bench.hpp"

#include "src/app/command.hpp"
#include "src/base/errors.hpp"
#include "src/bench/bench_collectives.hpp"
#include "src/bench/bench_generate.hpp"
#include "src/config/config.hpp"
#include "src/config/describe.hpp"

namespace zeropp {

namespace {

// The deck argument and its overrides, shared by every bench command.
class BenchCommand : public Command {
 protected:
  BenchCommand(CLI::App& group, const char* name, const char* help)
      : Command(group.add_subcommand(name, help)) {
    sub_->add_option("deck", deck_, "TOML deck")->required();
    sub_->allow_extras();
  }
  Config config() const {
    return collectively(MPI_COMM_WORLD, [&] { return load_config(deck_, overrides()); });
  }

 private:
  std::string deck_;
};

class StepCommand final : public BenchCommand {
 public:
  explicit StepCommand(CLI::App& group)
      : BenchCommand(group, "step",
                     "Time training steps in fp32 and bf16, and the GEMMs of the model's shapes") {
    sub_->add_option("--steps", steps_, "Timed steps (after one warm-up step)")->capture_default_str();
    sub_->footer("\n" + keys_help());
  }
  int run() override { return run_bench_step(config(), steps_); }

 private:
  int steps_ = 10;
};

class QuantCommand final : public BenchCommand {
 public:
  explicit QuantCommand(CLI::App& group)
      : BenchCommand(group, "quant", "Quantization error on the model's real weights and gradients") {
    sub_->add_option("--steps", steps_, "Training steps before measuring")->capture_default_str();
  }
  int run() override { return run_bench_quant(config(), steps_); }

 private:
  int steps_ = 50;
};

class CollectivesCommand final : public BenchCommand {
 public:
  explicit CollectivesCommand(CLI::App& group)
      : BenchCommand(group, "collectives",
                     "Each collective's time, bytes and bandwidth for ZeRO-3 and the ZeRO++ variants") {
    sub_->add_option("--steps", steps_, "Measured step (after this many warm-up steps)")
        ->capture_default_str();
    sub_->add_option("--bandwidths", gbps_, "Emulated inter-node Gbit/s per rank (0: off)")
        ->delimiter(',')
        ->capture_default_str();
    sub_->add_option("--latencies-us", latencies_us_, "Emulated inter-node latency per message (us)")
        ->delimiter(',')
        ->capture_default_str();
  }
  int run() override { return run_bench_collectives(config(), steps_, gbps_, latencies_us_); }

 private:
  int steps_ = 2;
  std::vector<double> gbps_ = {0, 1, 10}, latencies_us_ = {0};
};

class GenerateBenchCommand final : public BenchCommand {
 public:
  explicit GenerateBenchCommand(CLI::App& group)
      : BenchCommand(
            group, "generate",
            "Generated tokens/s and bytes per token for each weight source (zero.inference_weights)") {
    sub_->add_option("--prompt-tokens", o_.prompt_tokens, "Prompt length")->capture_default_str();
    sub_->add_option("--new-tokens", o_.new_tokens, "Tokens generated per call")->capture_default_str();
    sub_->add_option("--repeats", o_.repeats, "Interleaved runs per row (the median is shown)")
        ->capture_default_str();
    sub_->add_option("--bandwidths", o_.gbps, "Emulated inter-node Gbit/s per rank (0: off)")
        ->delimiter(',')
        ->capture_default_str();
    sub_->add_option("--weights", o_.weights, "Weight sources (default: all)")->delimiter(',');
  }
  int run() override { return run_bench_generate(config(), o_); }

 private:
  BenchGenerateOptions o_;
};

}  // namespace

void add_bench_command(CLI::App& app, Commands& out) {
  auto* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  out.push_back(std::make_unique<StepCommand>(*bench));
  out.push_back(std::make_unique<QuantCommand>(*bench));
  out.push_back(std::make_unique<CollectivesCommand>(*bench));
  out.push_back(std::make_unique<GenerateBenchCommand>(*bench));
}

}  // namespace zeropp
