// UTF-8 helpers shared by prepare-data and the tokenizer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace zeropp {

// Offset of the first byte that breaks UTF-8 (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF), or -1 if the text is valid.
int64_t first_invalid_utf8(std::string_view s);

// The code point starting at s[i] of text already checked by
// first_invalid_utf8; sets len to its length in bytes (1..4).
char32_t decode_utf8(std::string_view s, std::size_t i, std::size_t& len);

// The UTF-8 bytes of code point c (c <= U+10FFFF, not a surrogate).
std::string encode_utf8(char32_t c);

// "input PATH: not UTF-8 text (invalid byte 0xNN at offset K)", the message
// for a bad byte at s[bad] found at offset base + bad of the file.
std::string invalid_utf8_message(const std::string& what, std::string_view s, int64_t bad, int64_t base = 0);

}  // namespace zeropp
