// A key's value as text: read from the command line, written as TOML (to_toml,
// config_differences, the defaults in --help and the README).
#pragma once

#include <optional>
#include <string>

#include "src/config/key.hpp"

namespace zeropp {

// "an integer", "a number", "a boolean", "a string", "a list of strings".
const char* type_phrase(KeyType t);

// A command-line value: integers and numbers must be whole, booleans are
// true/false/1/0, lists are comma-separated ("" is the empty list). nullopt
// when the text is not of the type.
std::optional<KeyValue> value_from_text(KeyType t, const std::string& text);

// The value as a TOML value that reads back as the same value: numbers in the
// shortest form that round-trips, strings quoted and escaped, lists as arrays.
std::string toml_text(const KeyValue& v);

// Sets the key in c; `where` (file:line or "command line") names an integer
// that does not fit the key's int.
void store(Config& c, const Key& k, const KeyValue& v, const std::string& where);

}  // namespace zeropp
