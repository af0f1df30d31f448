// The per-key checks the table uses (src/config/key.hpp).
#include <cmath>

#include "src/config/key.hpp"
#include "src/config/key_value.hpp"

namespace zeropp {

namespace {
// Integer and floating-point keys alike.
double number(const KeyValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return double(*i);
  return std::get<double>(v);
}

// "a", "a or b", "a, b or c".
std::string either(const std::vector<std::string>& choices) {
  std::string r;
  for (size_t i = 0; i < choices.size(); ++i)
    r += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  return r;
}
}  // namespace

KeyCheck positive() {
  return {"positive", [](const KeyValue& v) { return number(v) > 0; }};
}

KeyCheck non_negative() {
  return {"non-negative", [](const KeyValue& v) { return number(v) >= 0; }};
}

KeyCheck in_range(int64_t lo, int64_t hi) {
  return {"in " + std::to_string(lo) + ".." + std::to_string(hi),
          [lo, hi](const KeyValue& v) { return number(v) >= double(lo) && number(v) <= double(hi); }};
}

KeyCheck in_unit_interval() {
  return {"in [0, 1)", [](const KeyValue& v) { return number(v) >= 0 && number(v) < 1; }};
}

KeyCheck finite() {
  return {"finite", [](const KeyValue& v) { return std::isfinite(number(v)); }};
}

KeyCheck power_of_two() {
  return {"a power of two >= 2", [](const KeyValue& v) {
            const int64_t x = std::get<int64_t>(v);
            return x >= 2 && (x & (x - 1)) == 0;
          }};
}

KeyCheck one_of(std::initializer_list<int64_t> values) {
  std::vector<int64_t> allowed(values);
  std::vector<std::string> shown;
  for (auto a : allowed) shown.push_back(std::to_string(a));
  return {either(shown), [allowed](const KeyValue& v) {
            for (auto a : allowed)
              if (std::get<int64_t>(v) == a) return true;
            return false;
          }};
}

KeyCheck one_of(std::initializer_list<const char*> values) {
  return one_of(std::vector<std::string>(values.begin(), values.end()));
}

KeyCheck one_of(const std::vector<std::string>& allowed) {
  std::vector<std::string> shown;
  for (const auto& a : allowed) shown.push_back(toml_text(a));
  return {either(shown), [allowed](const KeyValue& v) {
            for (const auto& a : allowed)
              if (std::get<std::string>(v) == a) return true;
            return false;
          }};
}

KeyCheck no_commas() {
  return {"entries without commas", [](const KeyValue& v) {
            for (const auto& s : std::get<std::vector<std::string>>(v))
              if (s.find(',') != std::string::npos) return false;
            return true;
          }};
}

KeyCheck not_empty() {
  return {"non-empty", [](const KeyValue& v) {
            if (const auto* s = std::get_if<std::string>(&v)) return !s->empty();
            return !std::get<std::vector<std::string>>(v).empty();
          }};
}

}  // namespace zeropp
