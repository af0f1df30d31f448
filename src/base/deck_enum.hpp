// Settings that take one of a few named values are enums; each value's deck
// spelling is written once, beside its enum, as an overload of deck_names()
// (the values in the order --help lists them). The config key table derives a
// key's check and --help from it (src/config/keys.cpp), deck_name() gives the
// spelling back for messages, and deck_value() parses it.
#pragma once

#include <array>
#include <optional>
#include <string>

namespace zeropp {

template <class E>
struct DeckName {
  E value;
  const char* name;
};

// "bf16" for Precision::BF16.
template <class E>
const char* deck_name(E e) {
  for (const auto& n : deck_names(E{}))
    if (n.value == e) return n.name;
  return "?";
}

// Precision::BF16 for "bf16"; nullopt for a spelling the deck does not know.
template <class E>
std::optional<E> deck_value(const std::string& name) {
  for (const auto& n : deck_names(E{}))
    if (name == n.name) return n.value;
  return std::nullopt;
}

}  // namespace zeropp
