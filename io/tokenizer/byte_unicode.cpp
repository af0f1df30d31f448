// GPT-2's byte <-> character mapping; see byte_unicode.hpp.
#include "io/tokenizer/byte_unicode.hpp"

#include "io/tokenizer/utf8.hpp"

namespace zeropp {

namespace {

bool printable(unsigned b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE); }

struct Tables {
  std::array<char32_t, 256> to_unicode{};
  std::array<uint8_t, 256> order{};
  Tables() {
    unsigned next = 0x100, k = 0;
    for (unsigned b = 0; b < 256; ++b)
      if (printable(b)) order[k++] = uint8_t(b);
    for (unsigned b = 0; b < 256; ++b) {
      if (printable(b)) {
        to_unicode[b] = b;
      } else {
        to_unicode[b] = next++;
        order[k++] = uint8_t(b);
      }
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

char32_t byte_to_unicode(uint8_t b) { return tables().to_unicode[b]; }

int unicode_to_byte(char32_t c) {
  if (c < 0x100) return printable(unsigned(c)) ? int(c) : -1;
  // Remapped bytes take U+0100 + k for the k-th non-printable byte.
  const unsigned k = unsigned(c - 0x100);
  return k < 68 ? tables().order[188 + k] : -1;
}

const std::array<uint8_t, 256>& byte_order() { return tables().order; }

std::string bytes_to_vocab_text(std::string_view bytes) {
  std::string out;
  for (char b : bytes) out += encode_utf8(byte_to_unicode(uint8_t(b)));
  return out;
}

bool vocab_text_to_bytes(std::string_view text, std::string& bytes) {
  bytes.clear();
  if (first_invalid_utf8(text) >= 0) return false;
  for (std::size_t i = 0, len = 0; i < text.size(); i += len) {
    const int b = unicode_to_byte(decode_utf8(text, i, len));
    if (b < 0) return false;
    bytes += char(b);
  }
  return true;
}

}  // namespace zeropp
