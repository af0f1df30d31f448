// GPT-2's vocabulary files (encoder.json, vocab.bpe: the input's two parts,
// NUL between them) as `--tokenizer` reads them; a vocabulary that loads must
// encode and decode a text back to itself.
#include <cstdint>

#include "io/tokenizer/tokenizer_files.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/vocab_roundtrip.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zeropp;
  const std::vector<std::string> parts = fuzz::split_input(data, size, 2);
  const std::string encoder = fuzz::write_scratch("encoder.json", parts[0]);
  const std::string merges = fuzz::write_scratch("vocab.bpe", parts[1]);
  try {
    fuzz::expect_roundtrip(load_gpt2_vocab(encoder, merges));
  } catch (const Error& e) {
    fuzz::expect_one_line(e, {encoder, merges});
  }
  return 0;
}
