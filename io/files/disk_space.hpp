// Room on disk for a checkpoint, checked before the collective write starts.
//
// An HDF5 write that fails in the middle of a collective call leaves the
// ranks in different collectives (rank 0 gave up, the others wait), so a full
// disk must be caught before the first byte: rank 0 compares what the file
// will take with what the file system offers this user.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "io/checkpoint/checkpoint.hpp"

namespace zeropp {

// Bytes a checkpoint of these shards takes on disk, a little over: the
// float32 data of every tensor plus a bound on HDF5's metadata.
int64_t checkpoint_bytes_estimate(const ShardGroups& groups);

// "no space left on device (needs 1.4 MiB, 0.9 MiB free in DIR)" when `bytes`
// exceed what dir's file system has free for unprivileged users (or a line
// saying why the free space is unknown), else nothing.
std::optional<std::string> disk_space_problem(const std::string& dir, int64_t bytes);

// The same decision without the file system (for tests).
std::optional<std::string> disk_space_problem(const std::string& dir, int64_t bytes, int64_t free_bytes);

}  // namespace zeropp
