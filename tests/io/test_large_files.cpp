// Sizes past 2^31 and 2^32 bytes in the files zeropp reads: token files and
// their concatenation, safetensors offsets and llm.c model headers. The files
// are sparse (ftruncate, a few bytes written with pwrite at the far end), so
// nothing large is written or read; each test case removes its files.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "io/data/token_file.hpp"
#include "io/data/token_files.hpp"
#include "io/interop/llmc_model.hpp"
#include "io/interop/safetensors.hpp"
#include "io/io_test_support.hpp"

using namespace zeropp;
using Catch::Matchers::Contains;
using zeropp::test::error_of;
using zeropp::test::TempDir;

namespace {

constexpr int64_t k2G = int64_t(1) << 31, k4G = int64_t(1) << 32;

// A file of `size` bytes holding `head` at 0 and `tail` at `tail_at`, the rest
// a hole; false when the filesystem allocated the hole (no sparse files).
bool sparse_file(const std::string& path, int64_t size, const std::string& head, int64_t tail_at,
                 const std::string& tail) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, off_t(size)) == 0);
  REQUIRE(::pwrite(fd, head.data(), head.size(), 0) == ssize_t(head.size()));
  REQUIRE(::pwrite(fd, tail.data(), tail.size(), off_t(tail_at)) == ssize_t(tail.size()));
  struct stat st {};
  REQUIRE(::fstat(fd, &st) == 0);
  ::close(fd);
  return int64_t(st.st_blocks) * 512 < (int64_t(1) << 24);
}

std::string bytes_of(const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); }

// An llm.c token file header claiming `count` tokens.
std::string token_header(int32_t count) {
  std::vector<int32_t> h(kTokenFileHeaderInts, 0);
  h[0] = kTokenFileMagic;
  h[1] = kTokenFileVersion;
  h[2] = count;
  return bytes_of(h.data(), h.size() * 4);
}

#define REQUIRE_SPARSE(ok)                                                  \
  if (!(ok)) {                                                              \
    WARN("SKIPPED: this filesystem does not keep sparse files (no holes)"); \
    return;                                                                 \
  }

}  // namespace

TEST_CASE("token files past 2^32 bytes, and 2^32 tokens over two files", "[large-files]") {
  TempDir dir("zeropp-large-tokens");
  const int32_t n = INT32_MAX;  // the format's largest count: 2^32 + 1022 bytes with the header
  const int64_t last = kTokenFileHeaderBytes + 2 * (int64_t(n) - 1);
  REQUIRE(last > k4G);
  const uint16_t a_last = 4242, b_first = 7, b_last = 999;
  REQUIRE_SPARSE(sparse_file(dir.file("a.bin"), last + 2, token_header(n), last, bytes_of(&a_last, 2)));
  REQUIRE_SPARSE(sparse_file(dir.file("b.bin"), last + 2, token_header(n) + bytes_of(&b_first, 2), last,
                             bytes_of(&b_last, 2)));
  const TokenFile a(dir.file("a.bin"));
  CHECK(a.size() == n);
  CHECK(a[n - 1] == a_last);
  const TokenFiles both(dir.file("a.bin") + "," + dir.file("b.bin"));
  CHECK(both.size() == 2 * int64_t(n));  // past 2^32 tokens
  uint16_t out[3] = {};
  both.read(int64_t(n) - 1, 2, out);  // across the boundary between the files
  CHECK(out[0] == a_last);
  CHECK(out[1] == b_first);
  both.read(2 * int64_t(n) - 1, 2, out);  // the last token, then the first
  CHECK(out[0] == b_last);
  CHECK(out[1] == 0);
}

TEST_CASE("a token header claiming more than the file holds is refused, naming the file", "[large-files]") {
  TempDir dir("zeropp-large-tokens");
  const std::string path = dir.file("short.bin");
  REQUIRE_SPARSE(sparse_file(path, k2G + 4096, token_header(INT32_MAX), k2G, "x"));
  const std::string msg = error_of([&] { TokenFile f(path); });
  CHECK_THAT(msg, Contains(path) && Contains("truncated") && Contains(std::to_string(INT32_MAX)) &&
                      Contains(std::to_string(kTokenFileHeaderBytes + 2 * int64_t(INT32_MAX))));
}

TEST_CASE("safetensors offsets past 2^32 bytes; a header claiming more than the file is refused",
          "[large-files]") {
  TempDir dir("zeropp-large-safetensors");
  // "big": 2^30 + 8 F32 values (2^32 + 32 bytes), then "small" right after it.
  const int64_t big = (int64_t(1) << 30) + 8, begin = 4 * big, end = begin + 16;
  std::string json = "{\"big\":{\"dtype\":\"F32\",\"shape\":[" + std::to_string(big) +
                     "],\"data_offsets\":[0," + std::to_string(begin) +
                     "]},\"small\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[" +
                     std::to_string(begin) + "," + std::to_string(end) + "]}}";
  json.resize((json.size() + 7) / 8 * 8, ' ');
  uint64_t len = json.size();
  const float small[4] = {1.5f, -2.0f, 3.25f, 4.0f};
  const int64_t data = 8 + int64_t(json.size());
  const std::string path = dir.file("big.safetensors");
  REQUIRE_SPARSE(sparse_file(path, data + end, bytes_of(&len, 8) + json, data + begin, bytes_of(small, 16)));
  const SafetensorsHeader h = read_safetensors_header(path);
  const SafetensorsEntry* s = h.find("small");
  REQUIRE(s != nullptr);
  CHECK(s->begin == uint64_t(begin));
  CHECK(read_safetensors_tensor(path, h, *s) == std::vector<float>(small, small + 4));
  REQUIRE(::truncate(path.c_str(), off_t(data + end - 4)) == 0);
  CHECK_THAT(error_of([&] { read_safetensors_header(path); }),
             Contains(path) && Contains(std::to_string(end)) && Contains(std::to_string(end - 4)));
}

TEST_CASE("an llm.c model header needing more than 2^32 bytes: the size it needs, exactly", "[large-files]") {
  TempDir dir("zeropp-large-llmc");
  LlmcHeader h;
  h.version = kLlmcVersionF32;
  h.max_seq_len = 1024;
  h.vocab_size = 50257;
  h.padded_vocab_size = 50304;
  h.n_layer = 48;
  h.n_head = 25;
  h.n_embd = 1600;  // GPT-2 XL: 1.56e9 values, 6.2 GB of float32
  int64_t values = 0;
  for (const LlmcArray& a : llmc_array_shapes(h)) {
    int64_t n = 1;
    for (int64_t d : a.shape) n *= d;
    values += n;
  }
  const int64_t need = 1024 + 4 * values;
  REQUIRE(need > k4G);
  std::vector<int32_t> hdr(256, 0);
  const int32_t fields[] = {kLlmcMagic, h.version, h.max_seq_len, h.vocab_size,
                            h.n_layer,  h.n_head,  h.n_embd,      h.padded_vocab_size};
  std::memcpy(hdr.data(), fields, sizeof fields);
  const std::string path = dir.file("xl.bin");
  REQUIRE_SPARSE(sparse_file(path, k4G + 1024, bytes_of(hdr.data(), 1024), k4G, "x"));
  CHECK_THAT(error_of([&] { read_llmc_model(path); }), Contains(path) &&
                                                           Contains(std::to_string(k4G + 1024) + " bytes") &&
                                                           Contains("need " + std::to_string(need)));
}
