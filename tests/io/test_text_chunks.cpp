// Chunked reading of text for the tokenizer (io/text_chunks.hpp): chunks end
// where GPT-2's pre-tokenisation ends a piece anyway, so encoding chunk by
// chunk gives exactly the tokens of encoding the whole text.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "io/text_chunks.hpp"
#include "io/tokenizer/bpe.hpp"
#include "io/tokenizer/train.hpp"
#include "io_test_support.hpp"

using namespace zeropp;
using Catch::Matchers::Contains;
using zeropp::test::error_of;
using zeropp::test::TempDir;

TEST_CASE("encoding chunk by chunk equals encoding the whole text", "[io]") {
  TempDir dir("zeropp-chunks");
  const std::string utf8 = std::string(ZEROPP_SOURCE_DIR) + "/tests/io/tokenizer_utf8.txt";
  std::ifstream kjv_in(std::string(ZEROPP_SOURCE_DIR) + "/data/kjv/kjv.txt", std::ios::binary), utf8_in(utf8);
  std::ostringstream s;
  s << kjv_in.rdbuf() << utf8_in.rdbuf();
  REQUIRE(s.str().size() > 300000);  // data/kjv/kjv.txt: scripts/prepare-corpus
  const std::string text = s.str().substr(s.str().size() - 300000);  // KJV's end, then the UTF-8 text
  std::ofstream(dir.file("text.txt"), std::ios::binary) << text;
  const BpeTokenizer tok(train_bpe({utf8}, 300));
  TextChunks chunks(dir.file("text.txt"), 1000, 1 << 20);
  std::string_view chunk;
  std::string joined;
  std::vector<uint32_t> ids;
  int n = 0;
  while (chunks.next(chunk)) {
    joined += chunk;
    tok.encode(chunk, ids);
    ++n;
  }
  CHECK(n > 250);
  CHECK(joined == text);
  CHECK(chunks.bytes_read() == int64_t(text.size()));
  CHECK(ids == tok.encode(text));
}

TEST_CASE("chunk reading refuses non-UTF-8 text and lines past the limit, naming the file", "[io]") {
  TempDir dir("zeropp-chunks-bad");
  std::ofstream(dir.file("long.txt")) << std::string(5000, 'x') << "\nend\n";
  TextChunks long_line(dir.file("long.txt"), 1000, 4096);
  std::string_view chunk;
  CHECK_THAT(error_of([&] { long_line.next(chunk); }),
             Contains(dir.file("long.txt")) && Contains("no line break"));
  std::ofstream(dir.file("bad.txt")) << std::string(3000, 'a') << "\nb\xC3(\n";
  TextChunks bad(dir.file("bad.txt"), 1000, 1 << 20);
  CHECK_THAT(error_of([&] {
               while (bad.next(chunk)) {
               }
             }),
             Contains(dir.file("bad.txt")) && Contains("invalid byte 0xC3 at offset 3002"));
  CHECK_THAT(error_of([&] { TextChunks missing(dir.file("none.txt")); }), Contains(dir.file("none.txt")));
}
