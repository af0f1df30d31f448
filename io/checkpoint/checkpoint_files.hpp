// The checkpoint directory: names, `latest`, retention, durable renames.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace zeropp::ckpt {

// fsync of a file or directory; Error naming the path on failure.
void fsync_path(const std::string& path, bool directory);

std::string join(const std::string& dir, const std::string& name);

// ".<name>.tmp": where a checkpoint is written before its rename.
std::string tmp_name(const std::string& name);

// Removes ".*.tmp" files left by interrupted saves, and "latest.tmp".
void remove_stale_temporaries(const std::string& dir);

// Writes `latest` (through "latest.tmp", fsynced, renamed) naming `name`.
void write_latest(const std::string& dir, const std::string& name);

// Keeps the newest `keep` checkpoints by step, and always `protect`.
void apply_retention(const std::string& dir, int keep, const std::string& protect);

}  // namespace zeropp::ckpt
