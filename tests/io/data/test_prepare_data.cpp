// prepare_data: byte-level tokens, the train/validation split, and its errors
// (none of which may touch existing output files).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "io/data/prepare_data.hpp"
#include "io/data/token_file.hpp"
#include "io/io_test_support.hpp"
#include "src/base/errors.hpp"

using namespace zeropp;
namespace fs = std::filesystem;
using Catch::Matchers::Contains;

using zeropp::test::TempDir;

using zeropp::test::error_of;

namespace {

std::string write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("prepare_data writes byte tokens, the last fraction as validation", "[io]") {
  TempDir dir("zeropp-prepare");
  std::string text;
  for (int i = 0; i < 50; ++i)
    text += "In the beginning, line " + std::to_string(i) + ": caf\u00e9 \u2014 \U0001F600\n";
  const std::string input = write_text(dir.file("in.txt"), text);
  const std::string out = dir.file("nested/out");  // created with its parent
  for (double f : {0.05, 0.5, 0.013}) {
    const PrepareStats st = prepare_data(input, out, f);
    const auto n = int64_t(text.size());
    REQUIRE(st.input_bytes == n);
    REQUIRE(st.val_tokens == int64_t(std::floor(double(n) * f)));
    REQUIRE(st.train_tokens + st.val_tokens == n);
    REQUIRE(st.train_path == (fs::path(out) / "train.bin").string());
    REQUIRE(st.val_path == (fs::path(out) / "val.bin").string());
    TokenFile train(st.train_path), val(st.val_path);
    REQUIRE(train.size() == st.train_tokens);
    REQUIRE(val.size() == st.val_tokens);
    train.check_vocab(kByteVocabSize);
    val.check_vocab(kByteVocabSize);
    std::string back;
    for (int64_t i = 0; i < train.size(); ++i) back += char(train[i]);
    for (int64_t i = 0; i < val.size(); ++i) back += char(val[i]);
    REQUIRE(back == text);
    CHECK_THAT(st.summary(), Contains(input) && Contains(std::to_string(st.train_tokens) + " tokens") &&
                                 Contains(std::to_string(st.val_tokens) + " tokens"));
  }
  REQUIRE(kDefaultValFraction == 0.05);
}

TEST_CASE("prepare_data errors name the input or value and leave existing files alone", "[io]") {
  TempDir dir("zeropp-prepare");
  const std::string out = dir.file("out");
  fs::create_directories(out);
  const std::string train = (fs::path(out) / "train.bin").string();
  write_text(train, "precious");
  const std::string good = write_text(dir.file("good.txt"), std::string(1000, 'a'));

  SECTION("missing input") {
    const std::string path = dir.file("nope.txt");
    CHECK_THAT(error_of([&] { prepare_data(path, out, 0.05); }),
               Contains(path) && Contains("cannot open") && Contains("No such file"));
  }
  SECTION("input is a directory") {
    CHECK_THAT(error_of([&] { prepare_data(dir.path.string(), out, 0.05); }),
               Contains(dir.path.string()) && Contains("directory"));
  }
  SECTION("empty input") {
    const std::string path = write_text(dir.file("empty.txt"), "");
    CHECK_THAT(error_of([&] { prepare_data(path, out, 0.05); }), Contains(path) && Contains("empty"));
  }
  SECTION("validation fraction outside (0, 1)") {
    for (double f : {0.0, 1.0, -0.1, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
      CHECK_THAT(error_of([&] { prepare_data(good, out, f); }),
                 Contains("validation fraction") && Contains("between 0 and 1"));
    }
  }
  SECTION("too small") {
    const std::string path = write_text(dir.file("tiny.txt"), "abcdefghij");
    CHECK_THAT(error_of([&] { prepare_data(path, out, 0.05); }),
               Contains(path) && Contains("too small") && Contains("10 train and 0 validation"));
    CHECK_THAT(error_of([&] { prepare_data(path, out, 0.95); }), Contains("1 train and 9 validation"));
    prepare_data(path, dir.file("ok"), 0.2);  // 8 + 2 is enough
  }
  SECTION("not UTF-8") {
    const std::string path = write_text(dir.file("bin.txt"), std::string("hello\xff world", 12));
    CHECK_THAT(error_of([&] { prepare_data(path, out, 0.05); }),
               Contains(path) && Contains("not UTF-8") && Contains("0xFF at offset 5"));
    const std::string overlong = write_text(dir.file("overlong.txt"), "ab\xc0\xaf");
    CHECK_THAT(error_of([&] { prepare_data(overlong, out, 0.05); }), Contains("0xC0 at offset 2"));
    const std::string cut = write_text(dir.file("cut.txt"), "abc\xe2\x82");
    CHECK_THAT(error_of([&] { prepare_data(cut, out, 0.05); }), Contains("0xE2 at offset 3"));
  }
  SECTION("output directory is a file") {
    const std::string path = write_text(dir.file("afile"), "x");
    CHECK_THAT(error_of([&] { prepare_data(good, path, 0.05); }), Contains(path));
  }
  REQUIRE(read_all(train) == "precious");
  REQUIRE_FALSE(fs::exists(fs::path(out) / "val.bin"));
}
