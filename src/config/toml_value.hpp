// A deck's (TOML) value as a key's value (src/config/parse.cpp).
#pragma once

#include <toml++/toml.h>

#include <optional>

#include "src/config/key.hpp"

namespace zeropp {

// The node as a value of type t, or nullopt when it is not of that type. A
// number key takes an integer too; a list key takes an array of strings
// (empty or not) or one string.
std::optional<KeyValue> value_from_toml(KeyType t, const toml::node& n);

}  // namespace zeropp
