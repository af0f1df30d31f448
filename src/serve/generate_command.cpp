#include "src/serve/generate_command.hpp"

#include <mpi.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>

#include "io/data/data_loader.hpp"
#include "io/data/token_files.hpp"
#include "io/tokenizer/tokenizer_files.hpp"
#include "src/base/errors.hpp"
#include "src/base/logging.hpp"
#include "src/generate/generate.hpp"
#include "src/run/micro_batches.hpp"
#include "src/serve/inference_run.hpp"

namespace zeropp {

namespace {

bool is_dir(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Text <-> token ids: byte-level (one token per byte) or BPE.
class Codec {
 public:
  Codec(const std::string& dir, int vocab_size) : vocab_size_(vocab_size) {
    if (dir.empty()) return;
    bpe_ = std::make_unique<BpeTokenizer>(load_vocab_dir(dir));
    if (int64_t(bpe_->vocab_size()) > vocab_size)
      throw Error("--tokenizer " + dir + ": " + std::to_string(bpe_->vocab_size()) +
                  " tokens, more than the model's vocab_size of " + std::to_string(vocab_size));
  }
  std::vector<int32_t> encode(const std::string& text, size_t which) const {
    std::vector<int32_t> out;
    if (bpe_) {
      for (uint32_t t : bpe_->encode(text)) out.push_back(int32_t(t));
      return out;
    }
    for (unsigned char c : text) {
      if (c >= vocab_size_)
        throw Error("prompt " + std::to_string(which + 1) + ": byte " + std::to_string(c) +
                    " is no token of the model's vocab_size " + std::to_string(vocab_size_) +
                    " (give --tokenizer DIR)");
      out.push_back(c);
    }
    return out;
  }
  // Bytes of one token (BPE tokens outside the vocabulary, and byte-level ids
  // of 256 and more, as "<id>").
  std::string text(int32_t t) const {
    if (bpe_ && size_t(t) < bpe_->vocab_size()) return bpe_->decode({uint32_t(t)});
    return t < 256 ? std::string(1, char(t)) : "<" + std::to_string(t) + ">";
  }
  const char* name() const { return bpe_ ? "BPE" : "byte-level"; }

 private:
  int vocab_size_;
  std::unique_ptr<BpeTokenizer> bpe_;
};

std::vector<std::string> all_prompts(const GenerateOptions& o) {
  std::vector<std::string> p = o.prompts;
  if (!o.prompt_file.empty()) {
    std::ifstream f(o.prompt_file);
    if (!f) throw Error("--prompt-file " + o.prompt_file + ": cannot open");
    for (std::string line; std::getline(f, line);)
      if (!line.empty()) p.push_back(line);
  }
  if (p.empty()) throw Error("generate: no prompt (give --prompt TEXT or --prompt-file FILE)");
  return p;
}

void out0(const std::string& s) {
  if (world_rank() != 0) return;
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

int run_generate(const std::string& arg, const GenerateOptions& opt,
                 const std::vector<std::string>& overrides) {
  if (opt.batch < 1) throw Error("--batch " + std::to_string(opt.batch) + ": must be at least 1");
  check_sampling_rule(opt.rule);
  const std::vector<std::string> texts = collectively(MPI_COMM_WORLD, [&] { return all_prompts(opt); });
  const int batch = std::min<int>(opt.batch, int(texts.size()));
  InferenceRun run(arg, overrides, batch, -1, opt.recompute ? Decoding::Recompute : Decoding::KVCache);
  const int context = run.cfg.train.seq_len;
  const std::string tok_dir = !opt.tokenizer.empty()       ? opt.tokenizer
                              : is_dir(arg + "/tokenizer") ? arg + "/tokenizer"
                                                           : "";
  std::vector<std::vector<int32_t>> prompts;
  const std::unique_ptr<Codec> made = collectively(MPI_COMM_WORLD, [&] {
    auto c = std::make_unique<Codec>(tok_dir, run.cfg.model.vocab_size);
    for (size_t i = 0; i < texts.size(); ++i) prompts.push_back(c->encode(texts[i], i));
    check_generation_fits(prompts, opt.max_new_tokens, context);
    return c;
  });
  const Codec& codec = *made;
  if (world_rank() == 0)
    std::fprintf(stderr,
                 "generate: %s (step %lld) on %s; %s tokens; %zu prompts in batches of %d\n"
                 "generate: memory per rank %s\n",
                 run.path.c_str(), (long long)run.step, run.topo.describe().c_str(), codec.name(),
                 prompts.size(), batch, memory_summary(run.memory).c_str());
  CoinStream coins(opt.seed);
  // zero.inference_weights decides how the sharded weights reach the model: built once for this call
  const auto weights = run.engine.inference_weights();
  weights->refresh();
  const PassRunner pass = [&](const std::function<void(UnitSource<float>&)>& f) { f(*weights); };
  int64_t generated = 0;
  const double t0 = MPI_Wtime();
  const std::clock_t c0 = std::clock();  // CPU time too: on a shared machine wall time says little
  for (size_t first = 0; first < prompts.size(); first += size_t(batch)) {
    const size_t n = std::min(prompts.size() - first, size_t(batch));
    const std::vector<std::vector<int32_t>> group(prompts.begin() + long(first),
                                                  prompts.begin() + long(first + n));
    // One prompt streams its tokens; a batch of several prints each when done.
    const bool stream = n == 1 && !opt.ids;
    if (stream) out0(texts[first]);
    const auto outs = generate(
        *run.model, pass, group, opt.max_new_tokens, opt.rule, coins,
        [&](int, int32_t t) {
          if (stream) out0(codec.text(t));
        },
        opt.recompute ? Decoding::Recompute : Decoding::KVCache);
    for (size_t b = 0; b < n; ++b) {
      std::string line;
      if (opt.ids) {
        for (int32_t t : outs[b]) line += (line.empty() ? "" : " ") + std::to_string(t);
      } else if (!stream) {
        line = texts[first + b];
        for (int32_t t : outs[b]) line += codec.text(t);
      }
      out0(line + "\n");
      generated += int64_t(outs[b].size());
    }
  }
  const double dt = MPI_Wtime() - t0, cpu = double(std::clock() - c0) / CLOCKS_PER_SEC;
  if (world_rank() == 0)
    std::fprintf(stderr,
                 "generate: %lld tokens in %.2f s, %.2f s CPU on rank 0 (%.1f tokens/s, %s); KV cache and "
                 "decode scratch %s per rank; weights %s: copy %s, buffers %s per rank\n",
                 (long long)generated, dt, cpu, double(generated) / dt,
                 opt.recompute ? "recomputing the forward per token" : "KV cache",
                 human_bytes(double(run.model->decode_bytes())).c_str(), weights->name().c_str(),
                 human_bytes(double(weights->copy_bytes())).c_str(),
                 human_bytes(double(weights->buffer_bytes())).c_str());
  return kExitOk;
}

int run_eval(const std::string& arg, const EvalOptions& opt, const std::vector<std::string>& overrides) {
  if (opt.max_batches < 0) throw Error("--max-batches " + std::to_string(opt.max_batches) + ": must be >= 0");
  InferenceRun run(arg, overrides, 0, 0, std::nullopt);
  const auto& t = run.cfg.train;
  const auto loader = collectively(run.topo.world.get(), [&] {
    return std::make_unique<DataLoader>(DataLoader::validation(token_file_spec({opt.data}), t.batch_size,
                                                               t.seq_len, run.topo.rank, run.topo.P,
                                                               run.cfg.model.vocab_size));
  });
  // Every rank evaluates the same number of windows: the file's W whole
  // windows split evenly (the last W mod P left out).
  int64_t per_rank = loader->windows_per_epoch() / run.topo.P;
  if (opt.max_batches > 0) per_rank = std::min<int64_t>(per_rank, opt.max_batches);
  if (per_rank < 1)
    throw Error("--data " + opt.data + ": " + std::to_string(loader->num_tokens()) +
                " tokens hold fewer than " + std::to_string(run.topo.P) + " windows of B x T = " +
                std::to_string(loader->tokens_per_batch()) + " tokens (one per rank)");
  const double t0 = MPI_Wtime();
  const double loss = run.engine.eval_loss(validation_batches(*loader, int(per_rank)));
  const int64_t tokens = per_rank * run.topo.P * loader->tokens_per_batch();
  log0("eval: %s (step %lld) on %s: %lld tokens in %lld windows of %d x %d\n", run.path.c_str(),
       (long long)run.step, run.topo.describe().c_str(), (long long)tokens,
       (long long)(per_rank * run.topo.P), t.batch_size, t.seq_len);
  log0("eval: memory per rank %s\n", memory_summary(run.memory).c_str());
  log0("eval: loss %.6f | perplexity %.4f | %.1f s\n", loss, std::exp(loss), MPI_Wtime() - t0);
  return kExitOk;
}

}  // namespace zeropp
