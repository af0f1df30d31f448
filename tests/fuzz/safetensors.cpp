// Safetensors files as `zeropp ckpt import` reads them: the header, the
// tensor table checked against the data section, and each tensor's values.
#include "io/interop/safetensors.hpp"

#include <cstdint>

#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zeropp;
  const std::string path = fuzz::write_scratch("model.safetensors", std::string(data, data + size));
  try {
    const SafetensorsHeader h = read_safetensors_header(path);
    for (const SafetensorsEntry& t : h.tensors) {
      try {
        read_safetensors_tensor(path, h, t);
      } catch (const Error& e) {
        fuzz::expect_one_line(e, {path});
      }
    }
  } catch (const Error& e) {
    fuzz::expect_one_line(e, {path});
  }
  return 0;
}
