// GPT-2's byte -> printable character mapping.
//
// GPT-2's vocabulary files write every token as text: each byte of the token
// becomes one printable code point. Bytes '!'..'~', U+00A1..U+00AC and
// U+00AE..U+00FF stand for themselves; the other 68 bytes (controls, space,
// DEL, U+00A0, U+00AD, ...) take U+0100, U+0101, ... in increasing byte order.
// Token ids 0..255 of GPT-2's encoder.json are the single bytes in the order
// "printable ones first, then the remapped ones" (byte_order below).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace zeropp {

// Code point standing for byte b.
char32_t byte_to_unicode(uint8_t b);
// The byte code point c stands for, or -1 if c stands for none.
int unicode_to_byte(char32_t c);
// The 256 bytes in GPT-2's order of ids 0..255.
const std::array<uint8_t, 256>& byte_order();

// Token bytes -> vocabulary text (UTF-8 of the code points) and back. The
// second returns false when `text` is not such a string (a character that
// stands for no byte, or invalid UTF-8).
std::string bytes_to_vocab_text(std::string_view bytes);
bool vocab_text_to_bytes(std::string_view text, std::string& bytes);

}  // namespace zeropp
