// Token files and shards as data.train / data.val name them: the input is cut
// into two shards (the first byte says where), read as one sequence across the
// shard boundary and the wrap-around, and checked against a vocabulary.
#include "io/data/token_files.hpp"

#include <cstdint>

#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zeropp;
  if (size == 0) return 0;
  const std::string rest(data + 1, data + size);
  const size_t cut = rest.size() * data[0] / 255;
  const std::string a = fuzz::write_scratch("shard_000.bin", rest.substr(0, cut));
  const std::string b = fuzz::write_scratch("shard_001.bin", rest.substr(cut));
  try {
    TokenFiles files(fuzz::scratch_dir() + "/shard_*.bin");
    uint16_t window[9];
    files.read(files.size() - 1, 9, window);
    files.check_vocab(50257);
  } catch (const Error& e) {
    fuzz::expect_one_line(e, {a, b});
  }
  return 0;
}
