// A Hugging Face config.json as `zeropp ckpt import` reads it beside model.safetensors.
#include "src/config/hf_config.hpp"

#include <cstdint>

#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zeropp;
  const std::string path = fuzz::write_scratch("config.json", std::string(data, data + size));
  try {
    read_hf_config(path);
  } catch (const Error& e) {
    fuzz::expect_one_line(e, {path});
  }
  return 0;
}
