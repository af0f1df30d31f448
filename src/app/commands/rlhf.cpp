// `zeropp rlhf DECK [--resume auto|FILE | --overwrite] [--section.key=value ...]`
#include "src/rlhf/rlhf.hpp"

#include "src/app/command.hpp"
#include "src/base/errors.hpp"
#include "src/config/config.hpp"

namespace zeropp {

namespace {

class RlhfCommand final : public Command {
 public:
  explicit RlhfCommand(CLI::App& app)
      : Command(app.add_subcommand("rlhf",
                                   "RLHF on the sharded engine: sample, score by a word rule, REINFORCE with "
                                   "a KL penalty ([rlhf])")) {
    sub_->add_option("deck", deck_, "TOML deck, e.g. inputs/rlhf.toml")->required();
    auto* resume =
        sub_->add_option("--resume", resume_,
                         "Resume from a checkpoint: 'auto' (the newest in checkpoint.dir, if any) or a file");
    sub_->add_flag("--overwrite", overwrite_, "Start over in a train.out_dir that holds a previous run")
        ->excludes(resume);
    sub_->allow_extras();
  }

  int run() override {
    const Config cfg = collectively(MPI_COMM_WORLD, [&] { return load_config(deck_, overrides()); });
    return run_rlhf(cfg, deck_, resume_, overwrite_);
  }

 private:
  std::string deck_, resume_;
  bool overwrite_ = false;
};

}  // namespace

void add_rlhf_command(CLI::App& app, Commands& out) { out.push_back(std::make_unique<RlhfCommand>(app)); }

}  // namespace zeropp
