// UTF-8 validation, decoding and encoding; see utf8.hpp.
#include "io/tokenizer/utf8.hpp"

#include <cstdio>

namespace zeropp {

int64_t first_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const unsigned c = p[i];
    size_t len;
    unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return int64_t(i);
    }
    if (i + len > n) return int64_t(i);
    if (p[i + 1] < lo || p[i + 1] > hi) return int64_t(i);
    for (size_t k = 2; k < len; ++k)
      if (p[i + k] < 0x80 || p[i + k] > 0xBF) return int64_t(i);
    i += len;
  }
  return -1;
}

char32_t decode_utf8(std::string_view s, std::size_t i, std::size_t& len) {
  const auto b = [&](std::size_t k) { return char32_t(static_cast<unsigned char>(s[i + k])); };
  const char32_t c = b(0);
  if (c < 0x80) {
    len = 1;
    return c;
  }
  if (c < 0xE0) {
    len = 2;
    return (c & 0x1F) << 6 | (b(1) & 0x3F);
  }
  if (c < 0xF0) {
    len = 3;
    return (c & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
  }
  len = 4;
  return (c & 0x07) << 18 | (b(1) & 0x3F) << 12 | (b(2) & 0x3F) << 6 | (b(3) & 0x3F);
}

std::string encode_utf8(char32_t c) {
  std::string out;
  if (c < 0x80) {
    out += char(c);
  } else if (c < 0x800) {
    out += char(0xC0 | (c >> 6));
    out += char(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += char(0xE0 | (c >> 12));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  } else {
    out += char(0xF0 | (c >> 18));
    out += char(0x80 | ((c >> 12) & 0x3F));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  }
  return out;
}

std::string invalid_utf8_message(const std::string& what, std::string_view s, int64_t bad, int64_t base) {
  char b[3];
  std::snprintf(b, sizeof b, "%02X", unsigned(static_cast<unsigned char>(s[size_t(bad)])));
  return what + ": not UTF-8 text (invalid byte 0x" + b + " at offset " + std::to_string(base + bad) + ")";
}

}  // namespace zeropp
