// Hugging Face's tokenizer.json as `--tokenizer` reads it; a vocabulary that
// loads must encode and decode a text back to itself.
#include <cstdint>

#include "io/tokenizer/tokenizer_files.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/vocab_roundtrip.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zeropp;
  const std::string path = fuzz::write_scratch("tokenizer.json", std::string(data, data + size));
  try {
    fuzz::expect_roundtrip(load_tokenizer_json(path));
  } catch (const Error& e) {
    fuzz::expect_one_line(e, {path});
  }
  return 0;
}
