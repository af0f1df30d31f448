// `zeropp ckpt info|verify|import|export`: inspect a checkpoint, recompute its
// checksums, convert weights from and to safetensors and llm.c files. Rank 0
// reads and writes; the other ranks wait for its verdict.
#include <cstdio>

#include "io/checkpoint/checkpoint.hpp"
#include "io/checkpoint/checkpoint_locate.hpp"
#include "src/app/ckpt_convert.hpp"
#include "src/app/command.hpp"
#include "src/base/errors.hpp"
#include "src/base/logging.hpp"

namespace zeropp {

namespace {

constexpr const char* kCheckpointHelp = "Checkpoint (.h5), checkpoint folder, run folder or a `latest` file";
constexpr const char* kFormatHelp =
    "safetensors or llmc (default: from the name: .safetensors or a folder, .bin)";

void print_info(const std::string& file, const CheckpointReport& r) {
  const auto& m = r.meta;
  log0("checkpoint %s\n  format version : %d\n  step           : %lld (%lld tokens seen)\n", file.c_str(),
       r.format_version, (long long)m.step, (long long)m.tokens_seen);
  log0("  saved by       : %s on P=%d X=%d Y=%d\n  size           : %s in %zu datasets\n",
       m.code_version.c_str(), m.world_size, m.ranks_per_node, m.nodes, human_bytes(double(r.bytes)).c_str(),
       r.datasets.size());
  for (const auto& d : r.datasets) {
    std::string shape;
    for (auto x : d.shape) shape += (shape.empty() ? "" : "x") + std::to_string(x);
    log0("  %-48s %-10s %-14s %s\n", d.path.c_str(), d.dtype.c_str(), shape.c_str(),
         d.checksum_ok ? "OK" : ("BAD " + d.problem).c_str());
  }
  log0("deck at save:\n%s\n", m.deck_toml.c_str());
}

// `ckpt info` and `ckpt verify`: both check every checksum; info also prints the contents.
class InspectCommand final : public Command {
 public:
  InspectCommand(CLI::App& group, bool info)
      : Command(
            info ? group.add_subcommand("info", "Deck, step, layout at save, sizes and per-dataset checksums")
                 : group.add_subcommand("verify", "Recompute every checksum; exit 0 when all match")),
        info_(info) {
    sub_->add_option("checkpoint", arg_, kCheckpointHelp)->required();
  }

  int run() override {
    std::string file;  // rank 0: the checkpoint the argument leads to
    const CheckpointReport r = collectively(MPI_COMM_WORLD, [&] {
      if (world_rank() != 0) return CheckpointReport{};
      file = locate_checkpoint(arg_);
      return inspect_checkpoint(file);
    });
    if (info_) print_info(file, r);
    size_t bad = 0;
    std::string names;  // the failing datasets, named so that one line says what is damaged
    for (const auto& d : r.datasets) {
      if (d.checksum_ok) continue;
      ++bad;
      names += (names.empty() ? "" : ", ") + d.path;
    }
    if (bad) {
      if (world_rank() <= 0)
        std::fprintf(stderr, "zeropp: error: %s: %zu of %zu datasets fail their checksum: %s\n", file.c_str(),
                     bad, r.datasets.size(), names.c_str());
      return kExitError;
    }
    if (!info_) log0("%s: all %zu datasets match their checksums\n", file.c_str(), r.datasets.size());
    return kExitOk;
  }

 private:
  std::string arg_;
  bool info_;
};

// `ckpt import` (safetensors or llm.c -> HDF5 checkpoint) and `ckpt export` (the reverse).
class ConvertCommand final : public Command {
 public:
  ConvertCommand(CLI::App& group, bool import)
      : Command(import ? group.add_subcommand(
                             "import",
                             "Hugging Face safetensors (GPT-2 family) or llm.c model file -> new "
                             "HDF5 checkpoint (weights only)")
                       : group.add_subcommand(
                             "export", "HDF5 checkpoint's weights -> safetensors (+ config.json) or llm.c")),
        import_(import) {
    if (import_) {
      sub_->add_option("source", in_, "model.safetensors (config.json beside it), its folder, or llm.c .bin")
          ->required();
      sub_->add_option("checkpoint", out_, "The HDF5 checkpoint to create (must not exist)")->required();
      sub_->add_option("--format", format_, kFormatHelp);
      sub_->add_option("--vocab-size", vocab_,
                       "Rows of wte to keep: fewer drop the rest, more add zero rows (default: the source's "
                       "vocabulary; llm.c's padding rows are dropped)");
      return;
    }
    sub_->add_option("checkpoint", in_, kCheckpointHelp)->required();
    sub_->add_option("out", out_, "File to create (must not exist): .safetensors or .bin")->required();
    sub_->add_option("--format", format_, kFormatHelp);
    sub_->add_option("--dtype", dtype_, "llm.c: fp32 (version 3) or bf16 (version 5)")
        ->check(CLI::IsMember({"fp32", "bf16"}))
        ->capture_default_str();
    sub_->add_option("--vocab-size", vocab_, "llm.c: the header's V (default: the checkpoint's vocabulary)");
  }

  int run() override {
    const std::string summary = collectively(MPI_COMM_WORLD, [&]() -> std::string {
      if (world_rank() != 0) return "";
      const WeightsFormat f =
          format_.empty() ? weights_format_of(import_ ? in_ : out_) : parse_weights_format(format_);
      if (import_) return import_weights(in_, f, out_, ImportOptions{vocab_});
      return export_weights(locate_checkpoint(in_), f, out_, ExportOptions{vocab_, dtype_ == "bf16"});
    });
    log0("%s\n", summary.c_str());
    return kExitOk;
  }

 private:
  std::string in_, out_, format_, dtype_ = "fp32";
  int vocab_ = 0;
  bool import_;
};

}  // namespace

void add_ckpt_command(CLI::App& app, Commands& out) {
  auto* ckpt = app.add_subcommand("ckpt", "Inspect and convert checkpoints");
  ckpt->require_subcommand(1);
  out.push_back(std::make_unique<InspectCommand>(*ckpt, true));
  out.push_back(std::make_unique<InspectCommand>(*ckpt, false));
  out.push_back(std::make_unique<ConvertCommand>(*ckpt, true));
  out.push_back(std::make_unique<ConvertCommand>(*ckpt, false));
}

}  // namespace zeropp
