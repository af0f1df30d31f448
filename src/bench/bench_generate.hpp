// `zeropp bench generate`: greedy KV-cache generation of a deck's model on its
// layout, for each weight source (zero.inference_weights: ZeRO-3 per-use
// gathers, hpZ, quantized copies, hpZ + quantized copy) at each emulated
// inter-node bandwidth: generated tokens/s and bytes per generated token
// (intra- and inter-node, exact counters, the once-per-call refresh
// included), and the memory each source holds.
#pragma once

#include <string>
#include <vector>

#include "src/config/config.hpp"

namespace zeropp {

struct BenchGenerateOptions {
  int prompt_tokens = 16, new_tokens = 32, repeats = 3;
  std::vector<double> gbps = {0, 1};
  std::vector<std::string> weights;  // empty: all
};

int run_bench_generate(const Config& cfg, const BenchGenerateOptions& o);

}  // namespace zeropp
