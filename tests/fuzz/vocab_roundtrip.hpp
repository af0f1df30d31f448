// A vocabulary that loaded: its BPE merge table must encode a text that uses
// every merge's neighbourhood (ASCII words, multi-byte UTF-8, the end-of-text
// marker) and decode it back to the same bytes.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "io/tokenizer/bpe.hpp"

namespace zeropp::fuzz {

inline void expect_roundtrip(BpeVocab vocab) {
  static const std::string text =
      "Hello, world! It's 2024: don't stop.<|endoftext|>  tabs\tand\nlines \xc3\xa9t\xc3\xa9 \xe2\x82\xac 42";
  const BpeTokenizer tok(std::move(vocab));
  if (tok.decode(tok.encode(text)) != text) {
    std::fprintf(stderr, "decode(encode(text)) differs from text\n");
    std::abort();
  }
}

}  // namespace zeropp::fuzz
