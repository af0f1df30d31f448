// `zeropp generate CHECKPOINT|RUN_DIR` and `zeropp eval CHECKPOINT --data FILE`:
// a checkpoint's model on P ranks, weights sharded as in training
// (inference_run.hpp). Generated text goes to stdout (rank 0), streamed token
// by token; what was loaded and the timing go to stderr.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/generate/sampler.hpp"

namespace zeropp {

struct GenerateOptions {
  std::vector<std::string> prompts;  // --prompt, in order
  std::string prompt_file;           // one prompt per line (empty lines skipped), after the --prompt ones
  int batch = 8;                     // prompts decoded together
  int max_new_tokens = 64;
  SamplingRule rule;
  uint64_t seed = 1234;
  std::string tokenizer;   // BPE vocabulary folder; "" = ARG/tokenizer when it exists, else byte-level
  bool ids = false;        // print the new token ids (one line per prompt) instead of text
  bool recompute = false;  // the whole forward per token instead of the KV cache (timing)
};
int run_generate(const std::string& arg, const GenerateOptions& opt,
                 const std::vector<std::string>& overrides);

struct EvalOptions {
  std::string data;     // token file(s), as data.train accepts
  int max_batches = 0;  // per rank (0: all the windows the file holds, split over the ranks)
};
int run_eval(const std::string& arg, const EvalOptions& opt, const std::vector<std::string>& overrides);

}  // namespace zeropp
