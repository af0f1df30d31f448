// The run's output folder: created on rank 0 once the configuration and the
// data have been accepted, so a bad input never touches existing outputs.
#pragma once

#include <string>

namespace zeropp {

// Creates `dir` (and parents) if missing; throws Error naming it otherwise.
void make_run_dir(const std::string& dir);

// Throws Error naming `key` and `dir` unless `dir` is, or can be created as,
// a folder this process can write in. Creates nothing that stays: a probe
// file in `dir` or its nearest existing parent is created and removed (root
// ignores permission bits, so asking access() would not do).
void check_writable_dir(const std::string& dir, const std::string& key);

// Writes `text` to dir/name through a temporary file and a rename, so a
// reader never sees half a file.
void write_text_atomic(const std::string& dir, const std::string& name, const std::string& text);

}  // namespace zeropp
