#include "src/config/key_value.hpp"

#include <climits>
#include <cstdio>
#include <sstream>

#include "src/base/errors.hpp"

namespace zeropp {

namespace {

std::string fmt_double(double v) {
  // Shortest text that reads back as the same double.
  std::string r;
  for (int prec = 6; prec <= 17; ++prec) {
    std::ostringstream s;
    s.precision(prec);
    s << v;
    r = s.str();
    if (std::stod(r) == v) break;
  }
  // TOML needs a '.' or exponent to read a float back as a float.
  if (r.find_first_of(".eEn") == std::string::npos) r += ".0";
  return r;
}

// A TOML basic string: double quotes, as errors and --help show strings too.
std::string quoted(const std::string& s) {
  std::string r = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      r += '\\';
      r += char(ch);
    } else if (ch < 0x20 || ch == 0x7f) {
      char u[8];
      std::snprintf(u, sizeof u, "\\u%04x", ch);
      r += u;
    } else {
      r += char(ch);
    }
  }
  return r + "\"";
}

}  // namespace

const char* type_phrase(KeyType t) {
  switch (t) {
    case KeyType::Int:
    case KeyType::Int64:
      return "an integer";
    case KeyType::Float:
      return "a number";
    case KeyType::Bool:
      return "a boolean";
    case KeyType::String:
      return "a string";
    case KeyType::StringList:
      return "a list of strings";
  }
  return "?";
}

std::optional<KeyValue> value_from_text(KeyType t, const std::string& text) {
  size_t used = 0;
  try {
    switch (t) {
      case KeyType::Int:
      case KeyType::Int64: {
        const long long v = std::stoll(text, &used);
        if (used != text.size()) return std::nullopt;
        return KeyValue(int64_t(v));
      }
      case KeyType::Float: {
        const double v = std::stod(text, &used);
        if (used != text.size()) return std::nullopt;
        return KeyValue(v);
      }
      case KeyType::Bool:
        if (text == "true" || text == "1") return KeyValue(true);
        if (text == "false" || text == "0") return KeyValue(false);
        return std::nullopt;
      case KeyType::String:
        return KeyValue(text);
      case KeyType::StringList: {
        std::vector<std::string> items;
        std::istringstream in(text);
        for (std::string item; std::getline(in, item, ',');) items.push_back(item);
        return KeyValue(items);
      }
    }
  } catch (const std::logic_error&) {  // stoll/stod: invalid or out of range
  }
  return std::nullopt;
}

std::string toml_text(const KeyValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return fmt_double(*d);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* s = std::get_if<std::string>(&v)) return quoted(*s);
  std::string r = "[";
  for (const auto& s : std::get<std::vector<std::string>>(v)) r += (r.size() > 1 ? ", " : "") + quoted(s);
  return r + "]";
}

namespace {
// Whether s is well-formed UTF-8 (what a TOML string must be: the saved deck is read back).
bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char b = static_cast<unsigned char>(s[i]);
    const size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t j = 1; j < n; ++j)
      if ((static_cast<unsigned char>(s[i + j]) >> 6) != 0x2) return false;
    i += n;
  }
  return true;
}
}  // namespace

void store(Config& c, const Key& k, const KeyValue& v, const std::string& where) {
  const auto* text = std::get_if<std::string>(&v);
  const auto* list = std::get_if<std::vector<std::string>>(&v);
  bool utf8 = !text || valid_utf8(*text);
  if (list)
    for (const auto& e : *list) utf8 = utf8 && valid_utf8(e);
  if (!utf8) throw Error(where + ": key '" + k.full_name() + "': the value is not valid UTF-8");
  if (k.type == KeyType::Int) {
    const int64_t i = std::get<int64_t>(v);
    if (i < INT_MIN || i > INT_MAX)
      throw Error(where + ": key '" + k.full_name() + "' value " + std::to_string(i) + " is out of range");
  }
  try {
    k.set(c, v);
  } catch (const Error& e) {  // an enum key's unknown spelling
    throw Error(where + ": " + e.what());
  }
}

}  // namespace zeropp
