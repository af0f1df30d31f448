// Every key shown to people, from the key table: the --help text and the
// README's key table (scripts/readme-keys). Test-only keys are left out.
#pragma once

#include <string>

namespace zeropp {

// For `zeropp train --help`: each key with its type, default, allowed values
// and meaning.
std::string keys_help();

// The README's key table (Markdown), between its keys:begin/end markers.
std::string keys_markdown();

}  // namespace zeropp
