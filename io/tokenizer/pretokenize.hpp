// GPT-2's pre-tokenisation: text -> pieces that BPE then encodes one by one.
//
// A hand-written scanner with the meaning of GPT-2's pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// matched leftmost-first from the end of the previous piece:
//   1. an apostrophe followed by s, t, re, ve, m, ll or d (lower case);
//   2. an optional U+0020 then a run of letters (general category L*);
//   3. the same for numbers (N*);
//   4. the same for anything else but whitespace;
//   5. a run of whitespace (the White_Space property) reaching the end of the
//      text, or else the run without its last character if that leaves one;
//   6. a single whitespace run of one character.
// Letters and numbers come from ICU's character database (libicu), the
// maintained source of Unicode classes; ASCII is classified without it.
#pragma once

#include <cstddef>
#include <string_view>

namespace zeropp {

inline constexpr std::string_view kEndOfText = "<|endoftext|>";

// End (byte offset) of the piece that starts at byte `begin` < text.size() of
// valid UTF-8 text. Pieces end on code point boundaries.
std::size_t next_piece(std::string_view text, std::size_t begin);

// Walks valid UTF-8 text: calls piece(std::string_view) for each piece and
// end_of_text() for each literal "<|endoftext|>" (never itself cut in pieces).
template <class Piece, class EndOfText>
void split_text(std::string_view text, Piece&& piece, EndOfText&& end_of_text) {
  while (!text.empty()) {
    const std::size_t eot = text.find(kEndOfText);
    const std::string_view plain = text.substr(0, eot);
    for (std::size_t i = 0; i < plain.size();) {
      const std::size_t end = next_piece(plain, i);
      piece(plain.substr(i, end - i));
      i = end;
    }
    if (eot == std::string_view::npos) break;
    end_of_text();
    text.remove_prefix(eot + kEndOfText.size());
  }
}

}  // namespace zeropp
