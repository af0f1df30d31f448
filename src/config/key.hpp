// One deck key: where it lives in Config, its type, help text, checks and
// whether --help and the README show it. The table of every key is
// config_table() (src/config/keys.cpp); parsing, validation, to_toml,
// config_differences, --help and the README's key table all read it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "src/config/config.hpp"

namespace zeropp {

enum class KeyType { Int, Int64, Float, Bool, String, StringList };

// A key's value whatever its field's type: integers as int64_t (Int keys are
// range-checked into int on the way in), numbers as double.
using KeyValue = std::variant<int64_t, double, bool, std::string, std::vector<std::string>>;

// A check on one key's value. `rule` completes "must be ..." in errors and
// fills the "allowed" column of --help and the README.
struct KeyCheck {
  std::string rule;
  std::function<bool(const KeyValue&)> ok;
};

struct Key {
  std::string section, name;
  KeyType type;
  std::string help;
  std::vector<KeyCheck> checks;
  bool hidden;  // test-only (fault injection): accepted, but not in --help or the README
  std::function<KeyValue(const Config&)> get;
  std::function<void(Config&, const KeyValue&)> set;

  std::string full_name() const { return section + "." + name; }
};

// Every key, in deck order.
const std::vector<Key>& config_table();

// The key named "section.name", or nullptr.
const Key* find_key(const std::string& full_name);

// Checks for the table (src/config/checks.cpp).
KeyCheck positive();                                    // > 0
KeyCheck non_negative();                                // >= 0
KeyCheck in_range(int64_t lo, int64_t hi);              // lo..hi
KeyCheck in_unit_interval();                            // [0, 1)
KeyCheck finite();                                      // not nan or inf
KeyCheck power_of_two();                                // 2, 4, 8, ...
KeyCheck one_of(std::initializer_list<int64_t> v);      // 8 or 4
KeyCheck one_of(std::initializer_list<const char*> v);  // "bf16" or "fp32"
KeyCheck one_of(const std::vector<std::string>& v);     // the same, for a list built at run time
KeyCheck not_empty();                                   // a string or list with something in it
KeyCheck no_commas();  // list entries without ',' (the flag form splits there)

}  // namespace zeropp
