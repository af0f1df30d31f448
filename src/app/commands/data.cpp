// `zeropp prepare-data` (text to token files) and `zeropp tokenizer train` (a BPE
// vocabulary). Rank 0 reads and writes; the other ranks wait for its verdict, so
// that a failure is one line and the same exit status everywhere.
#include "io/data/prepare_data.hpp"
#include "io/data/prepare_shards.hpp"
#include "io/files/run_dir.hpp"
#include "io/tokenizer/tokenizer_files.hpp"
#include "io/tokenizer/train.hpp"
#include "src/app/command.hpp"
#include "src/base/errors.hpp"
#include "src/base/logging.hpp"

namespace zeropp {

namespace {

class PrepareDataCommand final : public Command {
 public:
  explicit PrepareDataCommand(CLI::App& app)
      : Command(app.add_subcommand("prepare-data",
                                   "Turn UTF-8 text into token files (llm.c format): bytes, or BPE shards")) {
    sub_->add_option("--input", inputs_, "UTF-8 text file (with --tokenizer: one or more, one document each)")
        ->required();
    sub_->add_option("--out-dir", out_dir_, "Folder for train.bin and val.bin (with --tokenizer: the shards)")
        ->required();
    auto* tok = sub_->add_option("--tokenizer", tokenizer_dir_,
                                 "Folder with encoder.json + vocab.bpe or tokenizer.json: write "
                                 "val_NNNNNN.bin and train_NNNNNN.bin shards of BPE tokens");
    sub_->add_option("--val-fraction", val_fraction_, "Share of the tokens (at the end) for validation")
        ->capture_default_str()
        ->excludes(tok);
    sub_->add_option("--shard-tokens", shard_tokens_, "With --tokenizer: tokens per shard")
        ->capture_default_str()
        ->needs(tok);
    sub_->add_option("--val-tokens", val_tokens_, "With --tokenizer: the first tokens, for validation")
        ->capture_default_str()
        ->needs(tok);
  }

  int run() override {
    const std::string line = collectively(MPI_COMM_WORLD, [&]() -> std::string {
      if (world_rank() != 0) return "";
      if (!tokenizer_dir_.empty())
        return prepare_shards(inputs_, out_dir_, tokenizer_dir_, shard_tokens_, val_tokens_).summary();
      if (inputs_.size() != 1) throw Error("prepare-data: without --tokenizer, exactly one --input");
      return prepare_data(inputs_.front(), out_dir_, val_fraction_).summary();
    });
    log0("%s\n", line.c_str());
    return kExitOk;
  }

 private:
  std::vector<std::string> inputs_;
  std::string out_dir_, tokenizer_dir_;
  double val_fraction_ = 0.05;
  int64_t shard_tokens_ = kDefaultShardTokens, val_tokens_ = kDefaultValTokens;
};

class TokenizerTrainCommand final : public Command {
 public:
  explicit TokenizerTrainCommand(CLI::App& group)
      : Command(
            group.add_subcommand("train", "Learn a vocabulary: writes OUT/encoder.json and OUT/vocab.bpe")) {
    sub_->add_option("corpus", corpus_, "UTF-8 text files")->required();
    sub_->add_option("--vocab-size", vocab_size_, "Tokens, <|endoftext|> included (257 .. 65536)")
        ->required();
    sub_->add_option("--out", out_, "Folder for the vocabulary files")->required();
  }

  int run() override {
    const std::string line = collectively(MPI_COMM_WORLD, [&]() -> std::string {
      if (world_rank() != 0) return "";
      const BpeVocab v = train_bpe(corpus_, vocab_size_);
      make_run_dir(out_);
      write_gpt2_vocab(out_, v);
      return "tokenizer train: " + std::to_string(v.tokens.size()) + " tokens (" +
             std::to_string(v.merges.size()) + " merges) -> " + out_ + "/encoder.json, " + out_ +
             "/vocab.bpe";
    });
    log0("%s\n", line.c_str());
    return kExitOk;
  }

 private:
  std::vector<std::string> corpus_;
  std::string out_;
  std::size_t vocab_size_ = 0;
};

}  // namespace

void add_data_commands(CLI::App& app, Commands& out) {
  out.push_back(std::make_unique<PrepareDataCommand>(app));
  auto* tokenizer = app.add_subcommand("tokenizer", "Byte-level BPE vocabularies (GPT-2's format)");
  tokenizer->require_subcommand(1);
  out.push_back(std::make_unique<TokenizerTrainCommand>(*tokenizer));
}

}  // namespace zeropp
