// "did you mean": the known key closest to a misspelt one.
#pragma once

#include <string>
#include <vector>

namespace zeropp {

// Edits (insert, delete, substitute, swap two neighbours) that turn a into b.
size_t edit_distance(const std::string& a, const std::string& b);

// The key of `known` ("section.name") closest to `unknown`: by the whole name,
// or by the part after the dot in another section (one edit more), within
// about a third of the name's length; "" when none is that close.
std::string closest_key(const std::string& unknown, const std::vector<std::string>& known);

}  // namespace zeropp
