// Decks (TOML, through toml++) and --section.key=value overrides into a
// Config, and a Config back into TOML, all through the key table.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/base/errors.hpp"
#include "src/config/key_value.hpp"
#include "src/config/suggest.hpp"
#include "src/config/toml_value.hpp"

namespace zeropp {

namespace {

// " (did you mean 'model.n_head'?)" with the quotes given, or "".
std::string did_you_mean(const std::string& unknown, const std::string& open, const std::string& close) {
  std::vector<std::string> shown;
  for (const auto& k : config_table())
    if (!k.hidden) shown.push_back(k.full_name());
  const std::string best = closest_key(unknown, shown);
  return best.empty() ? "" : " (did you mean " + open + best + close + "?)";
}

const char* toml_type_phrase(const toml::node& n) {
  return n.is_integer()          ? "an integer"
         : n.is_floating_point() ? "a floating-point number"
         : n.is_boolean()        ? "a boolean"
         : n.is_string()         ? "a string"
         : n.is_table()          ? "a table"
         : n.is_array()          ? "an array"
                                 : "a date/time";
}

}  // namespace

// Values are built in place: moving a KeyValue temporary into the optional
// makes GCC 12 (-O1 with sanitizers) warn, falsely, of an uninitialized vector.
std::optional<KeyValue> value_from_toml(KeyType t, const toml::node& n) {
  switch (t) {
    case KeyType::Int:
    case KeyType::Int64:
      if (n.is_integer()) return std::optional<KeyValue>(std::in_place, *n.value<int64_t>());
      break;
    case KeyType::Float:
      if (n.is_floating_point() || n.is_integer())
        return std::optional<KeyValue>(std::in_place, *n.value<double>());
      break;
    case KeyType::Bool:
      if (n.is_boolean()) return std::optional<KeyValue>(std::in_place, *n.value<bool>());
      break;
    case KeyType::String:
      if (n.is_string()) return std::optional<KeyValue>(std::in_place, *n.value<std::string>());
      break;
    case KeyType::StringList: {
      if (n.is_string()) {  // one entry; "" is the empty list, as on the command line
        const std::string one = *n.value<std::string>();
        return std::optional<KeyValue>(
            std::in_place, one.empty() ? std::vector<std::string>{} : std::vector<std::string>{one});
      }
      const auto* a = n.as_array();
      if (!a || !(a->empty() || a->is_homogeneous(toml::node_type::string))) break;
      std::vector<std::string> items;
      for (const auto& e : *a) items.push_back(*e.value<std::string>());
      return std::optional<KeyValue>(std::in_place, items);
    }
  }
  return std::nullopt;
}

namespace {

void walk(const toml::table& t, const std::string& prefix, Config& c, const std::string& file) {
  for (auto&& [k, node] : t) {
    const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (node.is_table() && prefix.empty()) {
      walk(*node.as_table(), key, c, file);
      continue;
    }
    const std::string where = file + ":" + std::to_string(node.source().begin.line);
    const Key* f = find_key(key);
    if (!f) throw Error(where + ": unknown key '" + key + "'" + did_you_mean(key, "'", "'"));
    const auto v = value_from_toml(f->type, node);
    if (!v)
      throw Error(where + ": key '" + key + "' must be " + type_phrase(f->type) + ", got " +
                  toml_type_phrase(node));
    store(c, *f, *v, where);
  }
}

}  // namespace

void apply_overrides(Config& c, const std::vector<std::string>& overrides) {
  for (size_t i = 0; i < overrides.size(); ++i) {
    const std::string& arg = overrides[i];
    if (arg.rfind("--", 0) != 0) throw Error("command line: unexpected argument '" + arg + "'");
    std::string key = arg.substr(2), value;
    const auto eq = key.find('=');
    if (eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    } else if (i + 1 < overrides.size()) {
      value = overrides[++i];
    } else {
      throw Error("command line: --" + key + " needs a value");
    }
    const Key* f = find_key(key);
    if (!f) throw Error("command line: unknown option --" + key + did_you_mean(key, "--", ""));
    const auto v = value_from_text(f->type, value);
    if (!v)
      throw Error("command line: --" + key + ": expected " + type_phrase(f->type) + ", got '" + value + "'");
    store(c, *f, *v, "command line");
  }
}

Config parse_config_text(const std::string& text, const std::string& origin) {
  Config c;
  toml::table deck;
  try {
    deck = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    throw Error(origin + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  walk(deck, "", c, origin);
  return c;
}

Config load_config(const std::string& deck_path, const std::vector<std::string>& overrides) {
  std::ifstream in(deck_path, std::ios::binary);
  if (!in) throw Error(deck_path + ": cannot read deck: " + std::strerror(errno));
  if (std::filesystem::is_directory(deck_path)) throw Error(deck_path + ": cannot read deck: it is a folder");
  std::ostringstream text;
  text << in.rdbuf();
  Config c = parse_config_text(text.str(), deck_path);
  apply_overrides(c, overrides);
  try {
    validate(c);
  } catch (const Error& e) {
    throw Error(deck_path + ": " + e.what());
  }
  return c;
}

std::string to_toml(const Config& c) {
  std::ostringstream out;
  std::string section;
  for (const auto& k : config_table()) {
    if (k.section != section) {
      out << (section.empty() ? "" : "\n") << "[" << k.section << "]\n";
      section = k.section;
    }
    out << k.name << " = " << toml_text(k.get(c)) << "\n";
  }
  return out.str();
}

std::vector<std::string> config_differences(const Config& a, const Config& b) {
  std::vector<std::string> out;
  for (const auto& k : config_table()) {
    const std::string va = toml_text(k.get(a)), vb = toml_text(k.get(b));
    if (va != vb) out.push_back(k.full_name() + ": " + va + " -> " + vb);
  }
  return out;
}

std::string checkpoint_dir(const Config& c) {
  return c.checkpoint.dir.empty() ? c.train.out_dir + "/checkpoints" : c.checkpoint.dir;
}

}  // namespace zeropp
