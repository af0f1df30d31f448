#include "src/config/describe.hpp"

#include "src/config/key.hpp"
#include "src/config/key_value.hpp"

namespace zeropp {

namespace {

// "integer", "number", ... (the type phrase without its article).
std::string type_word(KeyType t) {
  const std::string p = type_phrase(t);
  return p.substr(p.find(' ') + 1);
}

std::string allowed(const Key& k) {
  std::string r;
  for (const auto& c : k.checks) r += (r.empty() ? "" : ", ") + c.rule;
  return r;
}

// Markdown cells cannot hold a '|'.
std::string cell(const std::string& s) {
  std::string r;
  for (char ch : s) r += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return r;
}

}  // namespace

std::string keys_help() {
  std::string s = "Deck keys (each can be overridden as --section.key=value):\n";
  for (const auto& k : config_table()) {
    if (k.hidden) continue;
    const std::string a = allowed(k);
    s += "  " + k.full_name() + " = " + toml_text(k.get(Config{})) + "  (" + type_word(k.type) +
         (a.empty() ? "" : ", " + a) + ")\n      " + k.help + "\n";
  }
  return s;
}

std::string keys_markdown() {
  std::string s = "| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n";
  for (const auto& k : config_table()) {
    if (k.hidden) continue;
    s += "| `" + k.full_name() + "` | " + type_word(k.type) + " | `" + cell(toml_text(k.get(Config{}))) +
         "` | " + cell(allowed(k)) + " | " + cell(k.help) + " |\n";
  }
  return s;
}

}  // namespace zeropp
