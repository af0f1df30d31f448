// llm.c model files (gpt2_124M.bin and its bf16 twin) as `zeropp ckpt import` reads them.
#include "io/interop/llmc_model.hpp"

#include <cstdint>

#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zeropp;
  const std::string path = fuzz::write_scratch("model.bin", std::string(data, data + size));
  try {
    read_llmc_model(path);
  } catch (const Error& e) {
    fuzz::expect_one_line(e, {path});
  }
  return 0;
}
