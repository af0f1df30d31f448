// How much memory this node offers a run: the smaller of the kernel's
// MemAvailable and what this process's memory cgroup (v2 or v1; a Slurm
// job's, a container's) still allows, or the
// ZEROPP_MEMORY_AVAILABLE environment variable when set (bytes, with an
// optional K/M/G/T suffix in powers of 1024: to tell zeropp about a smaller
// share of a node, and for tests).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zeropp {

struct NodeMemory {
  int64_t bytes = 0;
  std::string source;  // "MemAvailable", "cgroup limit" or "ZEROPP_MEMORY_AVAILABLE"
};

// Pure parsers, for the files below and the variable.
// /proc/meminfo text -> MemAvailable in bytes.
std::optional<int64_t> parse_meminfo_available(const std::string& meminfo);
// cgroup memory.max (v2) or memory.limit_in_bytes (v1) and the usage next to
// it -> bytes left under the limit (nullopt: no limit).
std::optional<int64_t> parse_cgroup_room(const std::string& limit, const std::string& usage);
// /proc/self/cgroup text -> the folders holding this process's memory
// cgroup files: its own cgroup (v2 "0::/path", v1 "N:memory:/path") under
// /sys/fs/cgroup (v2) or /sys/fs/cgroup/memory (v1), and those mounts' roots
// (a container sees its own cgroup there).
std::vector<std::string> cgroup_memory_dirs(const std::string& proc_self_cgroup);
// "8589934592", "8G", "512M" -> bytes; nullopt if not such a number.
std::optional<int64_t> parse_byte_count(const std::string& text);

// Reads the variable, /proc/meminfo and the cgroup files. Throws Error when
// the variable is malformed or MemAvailable cannot be read.
NodeMemory node_memory();

}  // namespace zeropp
