// `zeropp train DECK [--resume auto|FILE | --overwrite | --init-from CKPT] [--section.key=value ...]`
#include "src/train/train.hpp"

#include "src/app/command.hpp"
#include "src/base/errors.hpp"
#include "src/config/config.hpp"
#include "src/config/describe.hpp"

namespace zeropp {

namespace {

class TrainCommand final : public Command {
 public:
  explicit TrainCommand(CLI::App& app)
      : Command(app.add_subcommand("train", "Train the model a deck describes")) {
    sub_->add_option("deck", deck_, "TOML deck, e.g. inputs/default.toml")->required();
    auto* resume =
        sub_->add_option("--resume", resume_,
                         "Resume from a checkpoint: 'auto' (the newest in checkpoint.dir, if any) or a file");
    sub_->add_flag(
            "--overwrite", overwrite_,
            "Start over in a train.out_dir that holds a previous run: its metrics.h5 and checkpoints are "
            "deleted (without this, such a folder is refused)")
        ->excludes(resume);
    sub_->add_option("--init-from", init_from_,
                     "Start a new run (step 0, fresh optimizer) from a checkpoint's model weights, e.g. one "
                     "`zeropp ckpt import` made: fine-tuning")
        ->excludes(resume);
    sub_->allow_extras();
    sub_->footer("\n" + keys_help());
  }

  int run() override {
    const Config cfg = collectively(MPI_COMM_WORLD, [&] { return load_config(deck_, overrides()); });
    return run_training(cfg, deck_, resume_, overwrite_, init_from_);
  }

 private:
  std::string deck_, resume_, init_from_;
  bool overwrite_ = false;
};

}  // namespace

void add_train_command(CLI::App& app, Commands& out) { out.push_back(std::make_unique<TrainCommand>(app)); }

}  // namespace zeropp
