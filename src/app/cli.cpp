#include "src/app/cli.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "io/checkpoint.hpp"
#include "io/checkpoint_locate.hpp"
#include "io/prepare_data.hpp"
#include "src/app/bench.hpp"
#include "src/app/build_info.hpp"
#include "src/app/logging.hpp"
#include "src/app/train.hpp"
#include "src/base/errors.hpp"
#include "src/config/config.hpp"

namespace zeropp {

namespace {

std::string keys_footer() {
  std::string s = "\nDeck keys (each can be overridden as --section.key=value):\n";
  for (const auto& k : config_keys()) s += "  " + k + "\n";
  return s;
}

// `zeropp ckpt info|verify ARG` (rank 0 reads; the others wait for its verdict).
int run_ckpt_command(const std::string& arg, bool info) {
  std::string file;  // rank 0: the checkpoint ARG leads to
  const CheckpointReport r = collectively(MPI_COMM_WORLD, [&] {
    if (world_rank() != 0) return CheckpointReport{};
    file = locate_checkpoint(arg);
    return inspect_checkpoint(file);
  });
  if (info) {
    const auto& m = r.meta;
    log0("checkpoint %s\n  format version : %d\n  step           : %lld (%lld tokens seen)\n", file.c_str(),
         r.format_version, (long long)m.step, (long long)m.tokens_seen);
    log0("  saved by       : %s on P=%d X=%d Y=%d\n  size           : %s in %zu datasets\n",
         m.code_version.c_str(), m.world_size, m.ranks_per_node, m.nodes,
         human_bytes(double(r.bytes)).c_str(), r.datasets.size());
    for (const auto& d : r.datasets) {
      std::string shape;
      for (auto x : d.shape) shape += (shape.empty() ? "" : "x") + std::to_string(x);
      log0("  %-48s %-10s %-14s %s\n", d.path.c_str(), d.dtype.c_str(), shape.c_str(),
           d.checksum_ok ? "OK" : ("BAD " + d.problem).c_str());
    }
    log0("deck at save:\n%s\n", m.deck_toml.c_str());
  }
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
  if (!info) log0("%s: all %zu datasets match their checksums\n", file.c_str(), r.datasets.size());
  return kExitOk;
}

// CLI11 leaves unknown "--section.key[=value]" arguments as extras.
std::vector<std::string> overrides_of(const CLI::App* sub) { return sub->remaining(); }

}  // namespace

int run_cli(int argc, char** argv) {
  const bool root = world_rank() <= 0;
  CLI::App app{"zeropp: GPT training with ZeRO-3 and ZeRO++ (qwZ, hpZ, qgZ) over MPI"};
  app.set_version_flag("--version", [] { return version_text(); });
  app.require_subcommand(1);

  std::string deck;
  auto* train = app.add_subcommand("train", "Train the model a deck describes");
  train->add_option("deck", deck, "TOML deck, e.g. inputs/default.toml")->required();
  std::string resume;
  auto* resume_opt =
      train->add_option("--resume", resume,
                        "Resume from a checkpoint: 'auto' (the newest in checkpoint.dir, if any) or a file");
  bool overwrite = false;
  train
      ->add_flag(
          "--overwrite", overwrite,
          "Start over in a train.out_dir that holds a previous run: its metrics.h5 and checkpoints are "
          "deleted (without this, such a folder is refused)")
      ->excludes(resume_opt);
  train->allow_extras();
  train->footer(keys_footer());

  std::string input, out_dir;
  double val_fraction = 0.05;
  auto* prep =
      app.add_subcommand("prepare-data", "Turn UTF-8 text into byte-level token files (llm.c format)");
  prep->add_option("--input", input, "UTF-8 text file")->required();
  prep->add_option("--out-dir", out_dir, "Folder for train.bin and val.bin")->required();
  prep->add_option("--val-fraction", val_fraction, "Share of the tokens (at the end) for validation")
      ->capture_default_str();

  std::string ckpt_file;
  auto* ckpt = app.add_subcommand("ckpt", "Inspect checkpoints");
  ckpt->require_subcommand(1);
  auto* cinfo = ckpt->add_subcommand("info", "Deck, step, layout at save, sizes and per-dataset checksums");
  const char* ckpt_help = "Checkpoint (.h5), checkpoint folder, run folder or a `latest` file";
  cinfo->add_option("checkpoint", ckpt_file, ckpt_help)->required();
  auto* cverify = ckpt->add_subcommand("verify", "Recompute every checksum; exit 0 when all match");
  cverify->add_option("checkpoint", ckpt_file, ckpt_help)->required();

  auto* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  std::string bench_deck;
  int bench_steps = 10;
  auto* bstep = bench->add_subcommand(
      "step", "Time training steps in fp32 and bf16, and the GEMMs of the model's shapes");
  bstep->add_option("deck", bench_deck, "TOML deck")->required();
  bstep->add_option("--steps", bench_steps, "Timed steps (after one warm-up step)")->capture_default_str();
  bstep->allow_extras();
  bstep->footer(keys_footer());
  std::string quant_deck;
  int quant_steps = 50;
  auto* bquant =
      bench->add_subcommand("quant", "Quantization error on the model's real weights and gradients");
  bquant->add_option("deck", quant_deck, "TOML deck")->required();
  bquant->add_option("--steps", quant_steps, "Training steps before measuring")->capture_default_str();
  bquant->allow_extras();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (!root) return e.get_exit_code() == 0 ? kExitOk : kExitUsage;
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }

  try {
    if (*train) {
      const Config cfg = collectively(MPI_COMM_WORLD, [&] { return load_config(deck, overrides_of(train)); });
      return run_training(cfg, deck, resume, overwrite);
    }
    if (*prep) {
      const PrepareStats st = collectively(MPI_COMM_WORLD, [&] {
        // One writer: the others wait for its verdict.
        return world_rank() == 0 ? prepare_data(input, out_dir, val_fraction) : PrepareStats{};
      });
      log0("%s\n", st.summary().c_str());
      return kExitOk;
    }
    if (*cinfo || *cverify) return run_ckpt_command(ckpt_file, bool(*cinfo));
    if (*bstep) {
      const Config cfg =
          collectively(MPI_COMM_WORLD, [&] { return load_config(bench_deck, overrides_of(bstep)); });
      return run_bench_step(cfg, bench_steps);
    }
    if (*bquant) {
      const Config cfg =
          collectively(MPI_COMM_WORLD, [&] { return load_config(quant_deck, overrides_of(bquant)); });
      return run_bench_quant(cfg, quant_steps);
    }
  } catch (const AgreedError& e) {
    if (e.reporter) print_error(e.line());
    return kExitError;
  } catch (const Error& e) {
    // Outside agree_on_error an Error comes from what every rank checks alike.
    if (root) print_error(e.what());
    return kExitError;
  } catch (const std::exception& e) {
    // Anything else (an allocation, a system call) is this rank's alone.
    abort_on_this_rank(e.what());
  }
  return kExitUsage;
}

}  // namespace zeropp
