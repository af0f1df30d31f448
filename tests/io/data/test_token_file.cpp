// Token files: round trip, atomic replacement, and every bad-file error.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "io/data/token_file.hpp"
#include "io/io_test_support.hpp"
#include "src/base/errors.hpp"

using namespace zeropp;
namespace fs = std::filesystem;

using zeropp::test::TempDir;

using zeropp::test::error_of;

namespace {

// Writes a file with the given header fields followed by `tokens`.
void write_raw(const std::string& path, int32_t magic, int32_t version, int32_t count,
               const std::vector<uint16_t>& tokens) {
  std::vector<int32_t> header(kTokenFileHeaderInts, 0);
  header[0] = magic;
  header[1] = version;
  header[2] = count;
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(header.data()), std::streamsize(header.size() * 4));
  out.write(reinterpret_cast<const char*>(tokens.data()), std::streamsize(tokens.size() * 2));
}

}  // namespace

using Catch::Matchers::Contains;

TEST_CASE("token file round trip", "[io]") {
  TempDir dir("zeropp-token-file");
  for (size_t n : {size_t(0), size_t(1), size_t(1000), size_t(65536 + 7)}) {
    std::vector<uint16_t> tokens(n);
    for (size_t i = 0; i < n; ++i) tokens[i] = uint16_t((i * 7919) % 65536);
    const std::string path = dir.file("t" + std::to_string(n) + ".bin");
    write_token_file(path, tokens);
    REQUIRE(fs::file_size(path) == kTokenFileHeaderBytes + 2 * n);
    TokenFile f(path);
    REQUIRE(f.path() == path);
    REQUIRE(f.size() == int64_t(n));
    for (size_t i = 0; i < n; ++i) REQUIRE(f[int64_t(i)] == tokens[i]);
    f.check_vocab(65536);
  }
}

TEST_CASE("token file header is llm.c's", "[io]") {
  TempDir dir("zeropp-token-file");
  const std::string path = dir.file("h.bin");
  write_token_file(path, std::vector<uint16_t>{10, 20, 30});
  std::ifstream in(path, std::ios::binary);
  std::vector<int32_t> header(kTokenFileHeaderInts);
  in.read(reinterpret_cast<char*>(header.data()), std::streamsize(kTokenFileHeaderBytes));
  REQUIRE(header[0] == 20240520);
  REQUIRE(header[1] == 1);
  REQUIRE(header[2] == 3);
  for (size_t i = 3; i < header.size(); ++i) REQUIRE(header[i] == 0);
}

TEST_CASE("writing replaces a file atomically and leaves no temporary", "[io]") {
  TempDir dir("zeropp-token-file");
  const std::string path = dir.file("a.bin");
  write_token_file(path, std::vector<uint16_t>{1, 2, 3});
  TokenFile old_view(path);  // mapped: must keep seeing the old contents
  write_token_file(path, std::vector<uint16_t>{4, 5});
  REQUIRE(old_view.size() == 3);
  REQUIRE(old_view[2] == 3);
  TokenFile now(path);
  REQUIRE(now.size() == 2);
  REQUIRE(now[0] == 4);
  REQUIRE(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator{}) == 1);
}

TEST_CASE("token files can be moved", "[io]") {
  TempDir dir("zeropp-token-file");
  const std::string path = dir.file("m.bin");
  write_token_file(path, std::vector<uint16_t>{7, 8});
  TokenFile a(path);
  TokenFile b(std::move(a));
  REQUIRE(b.size() == 2);
  REQUIRE(b[1] == 8);
  TokenFile c(path);
  c = std::move(b);
  REQUIRE(c[0] == 7);
}

TEST_CASE("bad token files give one clear error naming the file", "[io]") {
  TempDir dir("zeropp-token-file");
  SECTION("missing") {
    const std::string path = dir.file("missing.bin");
    const std::string msg = error_of([&] { TokenFile f(path); });
    CHECK_THAT(msg, Contains(path) && Contains("cannot open") && Contains("No such file"));
  }
  SECTION("unreadable") {
    const std::string path = dir.file("locked.bin");
    write_token_file(path, std::vector<uint16_t>{1});
    fs::permissions(path, fs::perms::none);
    // root reads anything: only check when the permission bites.
    if (std::FILE* probe = std::fopen(path.c_str(), "rb")) {
      std::fclose(probe);
    } else {
      CHECK_THAT(error_of([&] { TokenFile f(path); }), Contains(path) && Contains("cannot open"));
    }
  }
  SECTION("a directory") {
    CHECK_THAT(error_of([&] { TokenFile f(dir.path.string()); }),
               Contains(dir.path.string()) && Contains("not a regular file"));
  }
  SECTION("shorter than the header") {
    const std::string path = dir.file("short.bin");
    std::ofstream(path) << "hello";
    CHECK_THAT(error_of([&] { TokenFile f(path); }),
               Contains(path) && Contains("truncated") && Contains("5 bytes"));
  }
  SECTION("wrong magic") {
    const std::string path = dir.file("magic.bin");
    write_raw(path, 12345, 1, 2, {1, 2});
    CHECK_THAT(error_of([&] { TokenFile f(path); }),
               Contains(path) && Contains("wrong magic 12345") && Contains("20240520"));
  }
  SECTION("wrong version") {
    const std::string path = dir.file("version.bin");
    write_raw(path, kTokenFileMagic, 2, 2, {1, 2});
    CHECK_THAT(error_of([&] { TokenFile f(path); }), Contains(path) && Contains("version 2"));
  }
  SECTION("truncated body") {
    const std::string path = dir.file("trunc.bin");
    write_raw(path, kTokenFileMagic, 1, 100, std::vector<uint16_t>(50, 1));
    CHECK_THAT(error_of([&] { TokenFile f(path); }),
               Contains(path) && Contains("truncated") && Contains("100 tokens") && Contains("1124 bytes"));
  }
  SECTION("negative count") {
    const std::string path = dir.file("neg.bin");
    write_raw(path, kTokenFileMagic, 1, -5, {});
    CHECK_THAT(error_of([&] { TokenFile f(path); }), Contains(path) && Contains("negative token count -5"));
  }
  SECTION("trailing data") {
    const std::string path = dir.file("long.bin");
    write_raw(path, kTokenFileMagic, 1, 2, {1, 2, 3});
    CHECK_THAT(error_of([&] { TokenFile f(path); }), Contains(path) && Contains("trailing data"));
  }
  SECTION("token outside the vocabulary") {
    const std::string path = dir.file("vocab.bin");
    write_token_file(path, std::vector<uint16_t>{1, 255, 300, 400});
    TokenFile f(path);
    f.check_vocab(401);
    CHECK_THAT(error_of([&] { f.check_vocab(256); }),
               Contains(path) && Contains("token id 300 at position 2") && Contains("size 256"));
  }
  SECTION("unwritable destination") {
    const std::string path = dir.file("no/such/dir/out.bin");
    CHECK_THAT(error_of([&] { write_token_file(path, std::vector<uint16_t>{1}); }),
               Contains(path) && Contains("cannot create"));
  }
}
