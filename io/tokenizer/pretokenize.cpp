// The pre-tokenisation scanner; the rules are in pretokenize.hpp.
#include "io/tokenizer/pretokenize.hpp"

#include <unicode/uchar.h>

#include "io/tokenizer/utf8.hpp"

namespace zeropp {

namespace {

enum class Cls { Letter, Number, Space, Other };

Cls classify(char32_t c) {
  if (c < 0x80) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return Cls::Letter;
    if (c >= '0' && c <= '9') return Cls::Number;
    if (c == ' ' || (c >= '\t' && c <= '\r')) return Cls::Space;
    return Cls::Other;
  }
  if (u_isUWhiteSpace(UChar32(c))) return Cls::Space;
  switch (u_charType(UChar32(c))) {
    case U_UPPERCASE_LETTER:
    case U_LOWERCASE_LETTER:
    case U_TITLECASE_LETTER:
    case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
      return Cls::Letter;
    case U_DECIMAL_DIGIT_NUMBER:
    case U_LETTER_NUMBER:
    case U_OTHER_NUMBER:
      return Cls::Number;
    default:
      return Cls::Other;
  }
}

// Class of the code point at byte i (i < text.size()); len: its byte length.
Cls class_at(std::string_view text, std::size_t i, std::size_t& len) {
  return classify(decode_utf8(text, i, len));
}

// End of the run of class `cls` starting at byte i.
std::size_t run_end(std::string_view text, std::size_t i, Cls cls) {
  std::size_t len = 0;
  while (i < text.size() && class_at(text, i, len) == cls) i += len;
  return i;
}

// Rule 1: length of a contraction at `begin`, or 0.
std::size_t contraction(std::string_view text, std::size_t begin) {
  if (text[begin] != '\'') return 0;
  const std::string_view rest = text.substr(begin + 1);
  for (std::string_view suffix : {"s", "t", "re", "ve", "m", "ll", "d"})
    if (rest.substr(0, suffix.size()) == suffix) return 1 + suffix.size();
  return 0;
}

}  // namespace

std::size_t next_piece(std::string_view text, std::size_t begin) {
  if (const std::size_t n = contraction(text, begin)) return begin + n;
  std::size_t len = 0;
  Cls cls = class_at(text, begin, len);
  // Rules 2-4: " ?X+" where the space joins a following letter/number/other run.
  std::size_t start = begin;
  if (text[begin] == ' ' && begin + 1 < text.size()) {
    std::size_t len2 = 0;
    const Cls next = class_at(text, begin + 1, len2);
    if (next != Cls::Space) {
      cls = next;
      start = begin + 1;
    }
  }
  if (cls != Cls::Space) return run_end(text, start, cls);
  // Rules 5-6 on the whitespace run [begin, end).
  const std::size_t end = run_end(text, begin, Cls::Space);
  if (end == text.size()) return end;
  std::size_t last = begin;  // start of the run's last code point
  for (std::size_t k = begin; k < end; k += len) {
    last = k;
    decode_utf8(text, k, len);
  }
  return last > begin ? last : end;
}

}  // namespace zeropp
