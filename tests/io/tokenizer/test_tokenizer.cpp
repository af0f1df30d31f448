// The byte-level BPE tokenizer (io/tokenizer): GPT-2's byte alphabet and
// pre-tokenisation, encode/decode round trips on KJV and a UTF-8 test text
// with a vocabulary from train_bpe, malformed vocabulary files, and chunked
// reading (io/data/text_chunks.hpp): chunks end where pre-tokenisation ends a piece
// anyway, so encoding chunk by chunk gives the tokens of the whole text.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "io/data/text_chunks.hpp"
#include "io/io_test_support.hpp"
#include "io/tokenizer/bpe.hpp"
#include "io/tokenizer/byte_unicode.hpp"
#include "io/tokenizer/pretokenize.hpp"
#include "io/tokenizer/tokenizer_files.hpp"
#include "io/tokenizer/train.hpp"
#include "io/tokenizer/utf8.hpp"

using namespace zeropp;
using Catch::Matchers::Contains;
using zeropp::test::error_of;
using zeropp::test::TempDir;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::vector<std::string> pieces(std::string_view text) {
  std::vector<std::string> out;
  split_text(
      text, [&](std::string_view p) { out.emplace_back(p); }, [&] { out.emplace_back("<EOT>"); });
  return out;
}

const std::string kUtf8Text = std::string(ZEROPP_SOURCE_DIR) + "/tests/io/tokenizer/tokenizer_utf8.txt";
const std::string kKjv = std::string(ZEROPP_SOURCE_DIR) + "/data/kjv/kjv.txt";

}  // namespace

TEST_CASE("GPT-2's byte alphabet: printable bytes stand for themselves, the rest from U+0100", "[io]") {
  CHECK(byte_to_unicode('A') == U'A');
  CHECK(byte_to_unicode(0) == 0x100);
  CHECK(byte_to_unicode(' ') == 0x120);   // GPT-2's "Ġ"
  CHECK(byte_to_unicode('\n') == 0x10A);  // "Ċ"
  CHECK(byte_to_unicode(0xAD) == 0x143);  // the last of the 68 remapped bytes
  CHECK(byte_order()[0] == '!');
  CHECK(byte_order()[188] == 0);
  for (unsigned b = 0; b < 256; ++b) CHECK(unicode_to_byte(byte_to_unicode(uint8_t(b))) == int(b));
  std::string all, back;
  for (unsigned b = 0; b < 256; ++b) all += char(b);
  REQUIRE(vocab_text_to_bytes(bytes_to_vocab_text(all), back));
  CHECK(back == all);
  CHECK_FALSE(vocab_text_to_bytes(" ", back));  // U+0020 stands for no byte
}

TEST_CASE("pre-tokenisation follows GPT-2's pattern", "[io]") {
  using V = std::vector<std::string>;
  CHECK(pieces("Hello world's end") == V{"Hello", " world", "'s", " end"});
  CHECK(pieces("I'm  here\n\nnow") == V{"I", "'m", " ", " here", "\n", "\n", "now"});
  CHECK(pieces("a1b 22 !!x ?") == V{"a", "1", "b", " 22", " !!", "x", " ?"});
  CHECK(pieces("end   ") == V{"end", "   "});
  CHECK(pieces("don't DON'T") == V{"don", "'t", " DON", "'", "T"});
  CHECK(pieces("x<|endoftext|>y <|endoftext|>") == V{"x", "<EOT>", "y", " ", "<EOT>"});
  // Letters and numbers beyond ASCII (ICU classes); emoji are "other".
  CHECK(pieces("café ½ 日本 😀😀") == V{"café", " ½", " 日本", " 😀😀"});
  CHECK(pieces("a\u00a0b") == V{"a", "\u00a0", "b"});  // no-break space is whitespace
}

TEST_CASE("encode then decode gives KJV and a UTF-8 text back byte for byte", "[io]") {
  TempDir dir("zeropp-bpe");
  const std::string kjv = slurp(kKjv);
  REQUIRE(kjv.size() > 1000000);
  spit(dir.file("kjv_head.txt"), kjv.substr(0, 100000));
  const BpeVocab v = train_bpe({dir.file("kjv_head.txt"), kUtf8Text}, 400);
  CHECK(v.tokens.size() == 400);
  CHECK(v.tokens[v.end_of_text] == "<|endoftext|>");
  write_gpt2_vocab(dir.path.string(), v);
  const BpeTokenizer tok(load_vocab_dir(dir.path.string()));
  CHECK(tok.vocab().tokens == v.tokens);
  for (const std::string& text : {kjv, slurp(kUtf8Text)}) {
    const std::vector<uint32_t> ids = tok.encode(text);
    CHECK(ids.size() < text.size());  // the merges do compress
    CHECK(tok.decode(ids) == text);
  }
  // The literal special token becomes one token and comes back.
  const auto ids = tok.encode("a<|endoftext|>b");
  CHECK(ids == std::vector<uint32_t>{tok.encode("a")[0], tok.end_of_text(), tok.encode("b")[0]});
  CHECK_THAT(error_of([&] { tok.decode({400}); }), Contains("token id 400") && Contains("size 400"));
}

TEST_CASE("merges apply in rank order, all occurrences of the best pair at once", "[io]") {
  BpeVocab v;
  for (unsigned b = 0; b < 256; ++b) v.tokens.emplace_back(1, char(b));
  const auto add = [&](uint32_t l, uint32_t r) {
    v.merges.push_back({l, r, uint32_t(v.tokens.size())});
    v.tokens.push_back(v.tokens[l] + v.tokens[r]);
    return uint32_t(v.tokens.size() - 1);
  };
  const uint32_t bc = add('b', 'c'), ab = add('a', 'b'), abc = add(ab, 'c');
  v.end_of_text = uint32_t(v.tokens.size());
  v.tokens.emplace_back("<|endoftext|>");
  const BpeTokenizer tok(v);
  // "abcabc": (b,c) ranks first and takes both b's, so (a,b) never applies.
  CHECK(tok.encode("abcabc") == std::vector<uint32_t>{'a', bc, 'a', bc});
  CHECK(tok.encode("abab") == std::vector<uint32_t>{ab, ab});
  (void)abc;
}

TEST_CASE("malformed vocabulary files give one error naming the file", "[io]") {
  TempDir dir("zeropp-bpe-bad");
  const std::string enc = dir.file("encoder.json"), merges = dir.file("vocab.bpe"),
                    hf = dir.file("tokenizer.json");
  std::string ok_vocab = "{";
  for (unsigned k = 0; k < 256; ++k)
    ok_vocab += "\"" +
                [&] {
                  const std::string t = bytes_to_vocab_text(std::string(1, char(byte_order()[k])));
                  return t == "\"" ? "\\\"" : t == "\\" ? "\\\\" : t;
                }() +
                "\":" + std::to_string(k) + ",";
  spit(merges, "#version: 0.2\n");
  spit(enc, ok_vocab + "\"<|endoftext|>\":256}");
  CHECK(load_gpt2_vocab(enc, merges).tokens.size() == 257);
  spit(enc, ok_vocab + "\"<|endoftext|>\":257}");
  CHECK_THAT(error_of([&] { load_gpt2_vocab(enc, merges); }),
             Contains(enc) && Contains("257 tokens must have ids 0 .. 256"));
  // An id near 2^31 is refused before a table that large is allocated.
  spit(enc, "{\"a\": 2000000000}");
  CHECK_THAT(error_of([&] { load_gpt2_vocab(enc, merges); }), Contains(enc) && Contains("has id 2000000000"));
  // Token text is quoted with JSON's escapes: the message stays one line.
  spit(enc, "{\"a\\nb\": 0}");
  CHECK_THAT(error_of([&] { load_gpt2_vocab(enc, merges); }), Contains(enc + ": token \"a\\nb\""));
  spit(enc, ok_vocab + "\"<|endoftext|>\":-3}");
  CHECK_THAT(error_of([&] { load_gpt2_vocab(enc, merges); }), Contains(enc) && Contains("not an unsigned"));
  spit(enc, ok_vocab + "\"x y\":256,\"<|endoftext|>\":257}");
  CHECK_THAT(error_of([&] { load_gpt2_vocab(enc, merges); }), Contains(enc) && Contains("byte alphabet"));
  spit(enc, ok_vocab + "\"ab\":256,\"<|endoftext|>\":257}");
  spit(merges, "#version: 0.2\na b\na b\n");
  CHECK_THAT(error_of([&] { load_gpt2_vocab(enc, merges); }),
             Contains(merges + " line 3") && Contains("repeats"));
  spit(merges, "a b\n\nb c\n");
  CHECK_THAT(error_of([&] { load_gpt2_vocab(enc, merges); }), Contains(merges + " line 3"));
  spit(merges, "b c\n");
  CHECK_THAT(error_of([&] { load_gpt2_vocab(enc, merges); }),
             Contains(merges + " line 1") && Contains("\"bc\""));
  spit(hf, "{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}}");
  CHECK_THAT(error_of([&] { load_tokenizer_json(hf); }), Contains(hf) && Contains("pre_tokenizer"));
  spit(hf, "{\"model\": {\"type\": \"BPE\", \"vocab\": " + ok_vocab +
               "\"<|endoftext|>\":256}, \"merges\": [[\"a\"]]}," +
               "\"pre_tokenizer\": {\"type\": \"ByteLevel\"}}");
  CHECK_THAT(error_of([&] { load_tokenizer_json(hf); }), Contains(hf + " model.merges[0]"));
  spit(hf, "{\"model\": {\"type\": \"BPE\", \"vocab\": " + ok_vocab +
               "\"<|endoftext|>\":256}, \"merges\": [[\"a\", \"b\"]]}," +
               "\"pre_tokenizer\": {\"type\": \"ByteLevel\"}}");
  CHECK_THAT(error_of([&] { load_tokenizer_json(hf); }),
             Contains(hf + " model.merges[0]") && Contains("\"ab\""));
  spit(hf, "{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}, " +
               std::string("\"pre_tokenizer\": {\"type\": \"ByteLevel\", \"use_regex\": false}}"));
  CHECK_THAT(error_of([&] { load_tokenizer_json(hf); }), Contains(hf) && Contains("GPT-2's ByteLevel"));
  CHECK_THAT(error_of([&] { load_vocab_dir(dir.file("none")); }), Contains("none: is not a folder"));
  CHECK_THAT(error_of([&] { train_bpe({kUtf8Text}, 256); }), Contains("--vocab-size 256"));
}

TEST_CASE("encoding chunk by chunk equals encoding the whole text", "[io]") {
  TempDir dir("zeropp-chunks");
  const std::string utf8 = std::string(ZEROPP_SOURCE_DIR) + "/tests/io/tokenizer/tokenizer_utf8.txt";
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
