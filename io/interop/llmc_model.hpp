// llm.c's GPT-2 model files (gpt2_124M.bin, gpt2_124M_bf16.bin):
//   header   256 int32: [0] magic 20240326, [1] version (3: float32, 5: bfloat16),
//            [2] maxT, [3] V, [4] L, [5] NH, [6] C, [7] Vp (V padded, e.g. 50257 -> 50304); the rest 0
//   params   16 arrays back to back in the version's dtype (llmc_array_shapes): wte [Vp, C],
//            wpe [maxT, C], then per-layer stacks with matrices [out, in] (PyTorch Linear), lnf.
// Reading is strict: a bad magic, version, dimension or file size is one Error naming the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zeropp {

constexpr int32_t kLlmcMagic = 20240326;
constexpr int32_t kLlmcVersionF32 = 3, kLlmcVersionBF16 = 5;

struct LlmcHeader {
  int32_t version = kLlmcVersionF32;
  int32_t max_seq_len = 0, vocab_size = 0, n_layer = 0, n_head = 0, n_embd = 0, padded_vocab_size = 0;
};

struct LlmcArray {
  std::string name;  // llm.c's: "wte", "wpe", "ln1w", ..., "lnfb"
  std::vector<int64_t> shape;
};
// The 16 arrays in file order for this header.
std::vector<LlmcArray> llmc_array_shapes(const LlmcHeader& h);

// Checks a header's values (the dimensions positive and consistent); `where`
// names the file in errors.
void check_llmc_header(const LlmcHeader& h, const std::string& where);

struct LlmcModel {
  LlmcHeader header;
  std::vector<std::vector<float>> arrays;  // in llmc_array_shapes order; bf16 files widened exactly
};

LlmcModel read_llmc_model(const std::string& path);

// Writes `m` (version 3: float32; version 5: each value rounded to the nearest
// bfloat16) through a temporary file and a rename.
void write_llmc_model(const std::string& path, const LlmcModel& m);

}  // namespace zeropp
