// `zeropp generate CHECKPOINT [--prompt TEXT ...]` and `zeropp eval CHECKPOINT --data FILE`:
// a checkpoint's model on P ranks, weights sharded as in training (src/serve).
#include "src/app/command.hpp"
#include "src/serve/generate_command.hpp"

namespace zeropp {

namespace {

constexpr const char* kModelHelp = "Checkpoint file or folder, or a run folder";

class GenerateCommand final : public Command {
 public:
  explicit GenerateCommand(CLI::App& app)
      : Command(app.add_subcommand(
            "generate",
            "Generate text from a checkpoint on P ranks (weights sharded as in training, KV cache)")) {
    sub_->add_option("checkpoint", model_, kModelHelp)->required();
    sub_->add_option("--prompt", o_.prompts, "A prompt (repeatable)");
    sub_->add_option("--prompt-file", o_.prompt_file, "Prompts, one per line (empty lines skipped)");
    sub_->add_option("--batch", o_.batch, "Prompts decoded together")->capture_default_str();
    sub_->add_option("--max-new-tokens", o_.max_new_tokens, "Tokens generated per prompt")
        ->capture_default_str();
    sub_->add_option("--temperature", o_.rule.temperature, "Softmax temperature (0: greedy)")
        ->capture_default_str();
    sub_->add_option("--top-k", o_.rule.top_k, "Draw from the k most probable tokens (0: all)")
        ->capture_default_str();
    sub_->add_option("--top-p", o_.rule.top_p,
                     "Draw from the most probable tokens holding this mass, in (0, 1]")
        ->capture_default_str();
    sub_->add_option("--seed", o_.seed, "Seed of the draws (every rank draws the same)")
        ->capture_default_str();
    sub_->add_option("--tokenizer", o_.tokenizer,
                     "BPE vocabulary folder (encoder.json + vocab.bpe or tokenizer.json); default: the run "
                     "folder's tokenizer/ if any, else byte-level");
    sub_->add_flag("--ids", o_.ids, "Print the new token ids, one line per prompt, instead of text");
    sub_->add_flag("--recompute", o_.recompute,
                   "Recompute the whole forward for every token instead of using the KV cache (timing)");
    sub_->allow_extras();
    sub_->footer(
        "\nThe checkpoint's saved deck decides the model and the engine; deck keys may be overridden as "
        "in train (e.g. --zero.hpz_partition_size=2). One prompt at a time streams its tokens; a batch "
        "of several prints each text when the batch is done.");
  }

  int run() override { return run_generate(model_, o_, overrides()); }

 private:
  std::string model_;
  GenerateOptions o_;
};

class EvalCommand final : public Command {
 public:
  explicit EvalCommand(CLI::App& app)
      : Command(app.add_subcommand("eval", "Mean loss and perplexity of a checkpoint over a token file")) {
    sub_->add_option("checkpoint", model_, kModelHelp)->required();
    sub_->add_option("--data", o_.data, "Token file (or list/glob, as data.train)")->required();
    sub_->add_option("--max-batches", o_.max_batches, "At most this many batches per rank (0: every window)")
        ->capture_default_str();
    sub_->allow_extras();
  }

  int run() override { return run_eval(model_, o_, overrides()); }

 private:
  std::string model_;
  EvalOptions o_;
};

}  // namespace

void add_serve_commands(CLI::App& app, Commands& out) {
  out.push_back(std::make_unique<GenerateCommand>(app));
  out.push_back(std::make_unique<EvalCommand>(app));
}

}  // namespace zeropp
