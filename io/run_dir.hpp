// The run's output folder: created on rank 0 once the configuration and the
// data have been accepted, so a bad input never touches existing outputs.
#pragma once

#include <string>

namespace zeropp {

// Creates `dir` (and parents) if missing; throws Error naming it otherwise.
void make_run_dir(const std::string& dir);

// Writes `text` to dir/name through a temporary file and a rename, so a
// reader never sees half a file.
void write_text_atomic(const std::string& dir, const std::string& name, const std::string& text);

}  // namespace zeropp
