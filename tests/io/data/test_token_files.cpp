// Several token files as one sequence (io/data/token_files.hpp): the data loader
// over a glob or a list reads exactly what it reads from one file holding the
// concatenation, windows crossing file boundaries included.
#include <catch2/catch.hpp>
#include <numeric>

#include "io/data/data_loader.hpp"
#include "io/data/token_files.hpp"
#include "io/io_test_support.hpp"

using namespace zeropp;
using Catch::Matchers::Contains;
using zeropp::test::error_of;
using zeropp::test::TempDir;

TEST_CASE("the data loader over several files windows over their concatenation", "[io]") {
  TempDir dir("zeropp-files");
  std::vector<uint16_t> all(103);
  std::iota(all.begin(), all.end(), uint16_t(1000));
  write_token_file(dir.file("one.bin"), all);
  // Shards of 40, 0, 25 and 38 tokens, named so that glob order is this order.
  const std::vector<int> sizes = {40, 0, 25, 38};
  std::size_t at = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    write_token_file(dir.file("shard_00000" + std::to_string(k) + ".bin"), all.data() + at,
                     std::size_t(sizes[k]));
    at += std::size_t(sizes[k]);
  }
  const std::string glob = dir.file("shard_*.bin");
  const std::string list = dir.file("shard_000000.bin") + "," + dir.file("shard_000001.bin") + "," +
                           dir.file("shard_00000[23].bin");
  REQUIRE(expand_token_file_spec(glob).size() == 4);
  for (bool shuffle : {false, true}) {
    for (const std::string& spec : {glob, list}) {
      const int B = 2, T = 7, P = 2, A = 3;
      for (int r = 0; r < P; ++r) {
        DataLoader one(dir.file("one.bin"), B, T, r, P, A, 65536, shuffle, 11);
        DataLoader many(spec, B, T, r, P, A, 65536, shuffle, 11);
        REQUIRE(many.num_tokens() == 103);
        std::vector<int32_t> x1(B * T), y1(B * T), x2(B * T), y2(B * T);
        for (int64_t s = 0; s < 20; ++s)  // 20·3·2 windows of 14: several epochs and wraps
          for (int m = 0; m < A; ++m) {
            one.batch(s, m, x1.data(), y1.data());
            many.batch(s, m, x2.data(), y2.data());
            REQUIRE(x1 == x2);
            REQUIRE(y1 == y2);
          }
      }
    }
  }
  // A window that crosses from the first shard into the third (the second is empty).
  DataLoader many(glob, 1, 10, 0, 1, 1, 65536, false, 0);
  std::vector<int32_t> x(10), y(10);
  many.batch(3, 0, x.data(), y.data());  // starts at 30
  CHECK(x.front() == 1030);
  CHECK(y.back() == 1040);
}

TEST_CASE("bad file lists name the entry or the file", "[io]") {
  TempDir dir("zeropp-files-bad");
  write_token_file(dir.file("a.bin"), std::vector<uint16_t>(50, 7));
  CHECK_THAT(error_of([&] { TokenFiles f(dir.file("nothing_*.bin")); }),
             Contains("nothing_*.bin': the pattern matches no file"));
  CHECK_THAT(error_of([&] { TokenFiles f(dir.file("a.bin") + ","); }), Contains("an empty entry"));
  CHECK_THAT(error_of([&] { TokenFiles f(dir.file("a.bin") + "," + dir.file("b.bin")); }),
             Contains(dir.file("b.bin")));
  std::FILE* f = std::fopen(dir.file("bad.bin").c_str(), "wb");
  const int32_t header[256] = {20240520, 2, 0};
  std::fwrite(header, sizeof header, 1, f);
  std::fclose(f);
  CHECK_THAT(error_of([&] { TokenFiles t(dir.file("*.bin")); }),
             Contains(dir.file("bad.bin")) && Contains("version 2"));
  write_token_file(dir.file("c.bin"), std::vector<uint16_t>(5, 300));
  std::remove(dir.file("bad.bin").c_str());
  CHECK_THAT(error_of([&] { DataLoader d(dir.file("*.bin"), 2, 8, 0, 1, 1, 256, false, 0); }),
             Contains(dir.file("c.bin")) && Contains("token id 300"));
}
