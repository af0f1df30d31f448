// What rank 0 sends the other ranks about a checkpoint (and what the scanning
// child sends its parent): any bytes are one line or a scan that packs back
// to the same bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "io/checkpoint/checkpoint_metadata.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zeropp;
  const std::string bytes(data, data + size);
  try {
    if (ckpt::pack_scan(ckpt::unpack_scan(bytes, "checkpoint metadata")) != bytes) {
      std::fprintf(stderr, "unpack_scan then pack_scan changed the bytes\n");
      std::abort();
    }
  } catch (const Error& e) {
    fuzz::expect_one_line(e, {"checkpoint metadata"});
  }
  return 0;
}
