#include "src/app/cli.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "io/checkpoint.hpp"
#include "io/checkpoint_locate.hpp"
#include "io/prepare_data.hpp"
#include "io/prepare_shards.hpp"
#include "io/run_dir.hpp"
#include "io/tokenizer/tokenizer_files.hpp"
#include "io/tokenizer/train.hpp"
#include "src/app/ckpt_convert.hpp"
#include "src/base/errors.hpp"
#include "src/base/logging.hpp"
#include "src/bench/bench.hpp"
#include "src/bench/bench_collectives.hpp"
#include "src/bench/bench_generate.hpp"
#include "src/config/config.hpp"
#include "src/config/describe.hpp"
#include "src/rlhf/rlhf.hpp"
#include "src/run/build_info.hpp"
#include "src/serve/generate_command.hpp"
#include "src/train/train.hpp"

namespace zeropp {

namespace {

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
  std::string init_from;
  train
      ->add_option("--init-from", init_from,
                   "Start a new run (step 0, fresh optimizer) from a checkpoint's model weights, e.g. one "
                   "`zeropp ckpt import` made: fine-tuning")
      ->excludes(resume_opt);
  train->allow_extras();
  train->footer("\n" + keys_help());

  std::string model_arg;
  GenerateOptions gen;
  auto* generate = app.add_subcommand(
      "generate", "Generate text from a checkpoint on P ranks (weights sharded as in training, KV cache)");
  generate->add_option("checkpoint", model_arg, "Checkpoint file or folder, or a run folder")->required();
  generate->add_option("--prompt", gen.prompts, "A prompt (repeatable)");
  generate->add_option("--prompt-file", gen.prompt_file, "Prompts, one per line (empty lines skipped)");
  generate->add_option("--batch", gen.batch, "Prompts decoded together")->capture_default_str();
  generate->add_option("--max-new-tokens", gen.max_new_tokens, "Tokens generated per prompt")
      ->capture_default_str();
  generate->add_option("--temperature", gen.rule.temperature, "Softmax temperature (0: greedy)")
      ->capture_default_str();
  generate->add_option("--top-k", gen.rule.top_k, "Draw from the k most probable tokens (0: all)")
      ->capture_default_str();
  generate
      ->add_option("--top-p", gen.rule.top_p,
                   "Draw from the most probable tokens holding this mass, in (0, 1]")
      ->capture_default_str();
  generate->add_option("--seed", gen.seed, "Seed of the draws (every rank draws the same)")
      ->capture_default_str();
  generate->add_option("--tokenizer", gen.tokenizer,
                       "BPE vocabulary folder (encoder.json + vocab.bpe or tokenizer.json); default: the run "
                       "folder's tokenizer/ if any, else byte-level");
  generate->add_flag("--ids", gen.ids, "Print the new token ids, one line per prompt, instead of text");
  generate->add_flag("--recompute", gen.recompute,
                     "Recompute the whole forward for every token instead of using the KV cache (timing)");
  generate->allow_extras();
  generate->footer(
      "\nThe checkpoint's saved deck decides the model and the engine; deck keys may be overridden as "
      "in train (e.g. --zero.hpz_partition_size=2). One prompt at a time streams its tokens; a batch "
      "of several prints each text when the batch is done.");
  EvalOptions ev;
  auto* eval = app.add_subcommand("eval", "Mean loss and perplexity of a checkpoint over a token file");
  eval->add_option("checkpoint", model_arg, "Checkpoint file or folder, or a run folder")->required();
  eval->add_option("--data", ev.data, "Token file (or list/glob, as data.train)")->required();
  eval->add_option("--max-batches", ev.max_batches, "At most this many batches per rank (0: every window)")
      ->capture_default_str();
  eval->allow_extras();
  std::string rlhf_deck, rlhf_resume;
  auto* rlhf = app.add_subcommand(
      "rlhf",
      "RLHF on the sharded engine: sample, score by a word rule, REINFORCE with a KL penalty ([rlhf])");
  rlhf->add_option("deck", rlhf_deck, "TOML deck, e.g. inputs/rlhf.toml")->required();
  auto* rlhf_resume_opt =
      rlhf->add_option("--resume", rlhf_resume,
                       "Resume from a checkpoint: 'auto' (the newest in checkpoint.dir, if any) or a file");
  bool rlhf_overwrite = false;
  rlhf->add_flag("--overwrite", rlhf_overwrite, "Start over in a train.out_dir that holds a previous run")
      ->excludes(rlhf_resume_opt);
  rlhf->allow_extras();

  std::vector<std::string> inputs;
  std::string out_dir, tokenizer_dir;
  double val_fraction = 0.05;
  int64_t shard_tokens = kDefaultShardTokens, val_tokens = kDefaultValTokens;
  auto* prep = app.add_subcommand("prepare-data",
                                  "Turn UTF-8 text into token files (llm.c format): bytes, or BPE shards");
  prep->add_option("--input", inputs, "UTF-8 text file (with --tokenizer: one or more, one document each)")
      ->required();
  prep->add_option("--out-dir", out_dir, "Folder for train.bin and val.bin (with --tokenizer: the shards)")
      ->required();
  auto* tok_opt = prep->add_option("--tokenizer", tokenizer_dir,
                                   "Folder with encoder.json + vocab.bpe or tokenizer.json: write "
                                   "val_NNNNNN.bin and train_NNNNNN.bin shards of BPE tokens");
  prep->add_option("--val-fraction", val_fraction, "Share of the tokens (at the end) for validation")
      ->capture_default_str()
      ->excludes(tok_opt);
  prep->add_option("--shard-tokens", shard_tokens, "With --tokenizer: tokens per shard")
      ->capture_default_str()
      ->needs(tok_opt);
  prep->add_option("--val-tokens", val_tokens, "With --tokenizer: the first tokens, for validation")
      ->capture_default_str()
      ->needs(tok_opt);

  auto* tokenizer = app.add_subcommand("tokenizer", "Byte-level BPE vocabularies (GPT-2's format)");
  tokenizer->require_subcommand(1);
  std::vector<std::string> corpus;
  std::string tok_out;
  std::size_t vocab_size = 0;
  auto* ttrain =
      tokenizer->add_subcommand("train", "Learn a vocabulary: writes OUT/encoder.json and OUT/vocab.bpe");
  ttrain->add_option("corpus", corpus, "UTF-8 text files")->required();
  ttrain->add_option("--vocab-size", vocab_size, "Tokens, <|endoftext|> included (257 .. 65536)")->required();
  ttrain->add_option("--out", tok_out, "Folder for the vocabulary files")->required();

  std::string ckpt_file;
  auto* ckpt = app.add_subcommand("ckpt", "Inspect and convert checkpoints");
  ckpt->require_subcommand(1);
  auto* cinfo = ckpt->add_subcommand("info", "Deck, step, layout at save, sizes and per-dataset checksums");
  const char* ckpt_help = "Checkpoint (.h5), checkpoint folder, run folder or a `latest` file";
  cinfo->add_option("checkpoint", ckpt_file, ckpt_help)->required();
  auto* cverify = ckpt->add_subcommand("verify", "Recompute every checksum; exit 0 when all match");
  cverify->add_option("checkpoint", ckpt_file, ckpt_help)->required();
  std::string conv_in, conv_out, conv_format, conv_dtype = "fp32";
  int conv_vocab = 0;
  const char* format_help = "safetensors or llmc (default: from the name: .safetensors or a folder, .bin)";
  auto* cimport = ckpt->add_subcommand(
      "import",
      "Hugging Face safetensors (GPT-2 family) or llm.c model file -> new HDF5 checkpoint (weights only)");
  cimport
      ->add_option("source", conv_in, "model.safetensors (config.json beside it), its folder, or llm.c .bin")
      ->required();
  cimport->add_option("checkpoint", conv_out, "The HDF5 checkpoint to create (must not exist)")->required();
  cimport->add_option("--format", conv_format, format_help);
  cimport->add_option("--vocab-size", conv_vocab,
                      "Rows of wte to keep: fewer drop the rest, more add zero rows (default: the source's "
                      "vocabulary; llm.c's padding rows are dropped)");
  auto* cexport =
      ckpt->add_subcommand("export", "HDF5 checkpoint's weights -> safetensors (+ config.json) or llm.c");
  cexport->add_option("checkpoint", conv_in, ckpt_help)->required();
  cexport->add_option("out", conv_out, "File to create (must not exist): .safetensors or .bin")->required();
  cexport->add_option("--format", conv_format, format_help);
  cexport->add_option("--dtype", conv_dtype, "llm.c: fp32 (version 3) or bf16 (version 5)")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  cexport->add_option("--vocab-size", conv_vocab,
                      "llm.c: the header's V (default: the checkpoint's vocabulary)");

  auto* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  std::string bench_deck;
  int bench_steps = 10;
  auto* bstep = bench->add_subcommand(
      "step", "Time training steps in fp32 and bf16, and the GEMMs of the model's shapes");
  bstep->add_option("deck", bench_deck, "TOML deck")->required();
  bstep->add_option("--steps", bench_steps, "Timed steps (after one warm-up step)")->capture_default_str();
  bstep->allow_extras();
  bstep->footer("\n" + keys_help());
  std::string quant_deck;
  int quant_steps = 50;
  auto* bquant =
      bench->add_subcommand("quant", "Quantization error on the model's real weights and gradients");
  bquant->add_option("deck", quant_deck, "TOML deck")->required();
  bquant->add_option("--steps", quant_steps, "Training steps before measuring")->capture_default_str();
  bquant->allow_extras();

  std::string coll_deck;
  int coll_steps = 2;
  std::vector<double> coll_gbps = {0, 1, 10}, coll_latencies = {0};
  auto* bcoll = bench->add_subcommand(
      "collectives", "Each collective's time, bytes and bandwidth for ZeRO-3 and the ZeRO++ variants");
  bcoll->add_option("deck", coll_deck, "TOML deck")->required();
  bcoll->add_option("--steps", coll_steps, "Measured step (after this many warm-up steps)")
      ->capture_default_str();
  bcoll->add_option("--bandwidths", coll_gbps, "Emulated inter-node Gbit/s per rank (0: off)")
      ->delimiter(',')
      ->capture_default_str();
  bcoll->add_option("--latencies-us", coll_latencies, "Emulated inter-node latency per message (us)")
      ->delimiter(',')
      ->capture_default_str();
  bcoll->allow_extras();

  std::string gen_deck;
  BenchGenerateOptions gen_opts;
  auto* bgen = bench->add_subcommand(
      "generate", "Generated tokens/s and bytes per token for each weight source (zero.inference_weights)");
  bgen->add_option("deck", gen_deck, "TOML deck")->required();
  bgen->add_option("--prompt-tokens", gen_opts.prompt_tokens, "Prompt length")->capture_default_str();
  bgen->add_option("--new-tokens", gen_opts.new_tokens, "Tokens generated per call")->capture_default_str();
  bgen->add_option("--repeats", gen_opts.repeats, "Interleaved runs per row (the median is shown)")
      ->capture_default_str();
  bgen->add_option("--bandwidths", gen_opts.gbps, "Emulated inter-node Gbit/s per rank (0: off)")
      ->delimiter(',')
      ->capture_default_str();
  bgen->add_option("--weights", gen_opts.weights, "Weight sources (default: all)")->delimiter(',');
  bgen->allow_extras();

  auto* help = app.add_subcommand("help", "Reference");
  help->require_subcommand(1);
  bool markdown = false;
  auto* hkeys = help->add_subcommand("keys", "Every deck key: type, default, allowed values, meaning");
  hkeys->add_flag("--markdown", markdown, "As the README's Markdown table (scripts/readme-keys)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (!root) return e.get_exit_code() == 0 ? kExitOk : kExitUsage;
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }

  try {
    if (*hkeys) {
      log0("%s", markdown ? keys_markdown().c_str() : keys_help().c_str());
      return kExitOk;
    }
    if (*train) {
      const Config cfg = collectively(MPI_COMM_WORLD, [&] { return load_config(deck, overrides_of(train)); });
      return run_training(cfg, deck, resume, overwrite, init_from);
    }
    if (*generate) return run_generate(model_arg, gen, overrides_of(generate));
    if (*eval) return run_eval(model_arg, ev, overrides_of(eval));
    if (*rlhf) {
      const Config cfg =
          collectively(MPI_COMM_WORLD, [&] { return load_config(rlhf_deck, overrides_of(rlhf)); });
      return run_rlhf(cfg, rlhf_deck, rlhf_resume, rlhf_overwrite);
    }
    if (*prep) {
      // One writer: the others wait for its verdict.
      const std::string line = collectively(MPI_COMM_WORLD, [&]() -> std::string {
        if (world_rank() != 0) return "";
        if (!tokenizer_dir.empty())
          return prepare_shards(inputs, out_dir, tokenizer_dir, shard_tokens, val_tokens).summary();
        if (inputs.size() != 1) throw Error("prepare-data: without --tokenizer, exactly one --input");
        return prepare_data(inputs.front(), out_dir, val_fraction).summary();
      });
      log0("%s\n", line.c_str());
      return kExitOk;
    }
    if (*ttrain) {
      const std::string line = collectively(MPI_COMM_WORLD, [&]() -> std::string {
        if (world_rank() != 0) return "";
        const BpeVocab v = train_bpe(corpus, vocab_size);
        make_run_dir(tok_out);
        write_gpt2_vocab(tok_out, v);
        return "tokenizer train: " + std::to_string(v.tokens.size()) + " tokens (" +
               std::to_string(v.merges.size()) + " merges) -> " + tok_out + "/encoder.json, " + tok_out +
               "/vocab.bpe";
      });
      log0("%s\n", line.c_str());
      return kExitOk;
    }
    if (*cinfo || *cverify) return run_ckpt_command(ckpt_file, bool(*cinfo));
    if (*cimport || *cexport) {
      // Rank 0 converts; the others wait for its verdict.
      const std::string summary = collectively(MPI_COMM_WORLD, [&]() -> std::string {
        if (world_rank() != 0) return "";
        const std::string named = *cimport ? conv_in : conv_out;
        const WeightsFormat f =
            conv_format.empty() ? weights_format_of(named) : parse_weights_format(conv_format);
        if (*cimport) return import_weights(conv_in, f, conv_out, ImportOptions{conv_vocab});
        return export_weights(locate_checkpoint(conv_in), f, conv_out,
                              ExportOptions{conv_vocab, conv_dtype == "bf16"});
      });
      log0("%s\n", summary.c_str());
      return kExitOk;
    }
    if (*bstep) {
      const Config cfg =
          collectively(MPI_COMM_WORLD, [&] { return load_config(bench_deck, overrides_of(bstep)); });
      return run_bench_step(cfg, bench_steps);
    }
    if (*bcoll) {
      const Config cfg =
          collectively(MPI_COMM_WORLD, [&] { return load_config(coll_deck, overrides_of(bcoll)); });
      return run_bench_collectives(cfg, coll_steps, coll_gbps, coll_latencies);
    }
    if (*bgen) {
      const Config cfg =
          collectively(MPI_COMM_WORLD, [&] { return load_config(gen_deck, overrides_of(bgen)); });
      return run_bench_generate(cfg, gen_opts);
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
