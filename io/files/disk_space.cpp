#include "io/files/disk_space.hpp"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace zeropp {

namespace {
// HDF5 metadata: measured ~0.5 KiB per dataset (object header, checksum
// attributes, links) plus the superblock and the deck (a few KiB); bounded
// with room to spare.
constexpr int64_t kMetadataPerDataset = 2048;
constexpr int64_t kMetadataFixed = int64_t(64) << 10;
}  // namespace

int64_t checkpoint_bytes_estimate(const ShardGroups& groups) {
  int64_t bytes = kMetadataFixed;
  for (const auto& gs : groups)
    for (const TensorShard& s : gs.second) {
      int64_t n = 1;
      for (int64_t d : s.shape) n *= d;
      bytes += 4 * n + kMetadataPerDataset;
    }
  return bytes;
}

std::optional<std::string> disk_space_problem(const std::string& dir, int64_t bytes, int64_t free_bytes) {
  if (bytes <= free_bytes) return std::nullopt;
  char buf[160];
  std::snprintf(buf, sizeof buf, "no space left on device (needs %.1f MiB, %.1f MiB free in ",
                bytes / 1048576.0, free_bytes / 1048576.0);
  return buf + dir + ")";
}

std::optional<std::string> disk_space_problem(const std::string& dir, int64_t bytes) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0)
    return "cannot tell the free space in " + dir + ": " + std::strerror(errno);
  return disk_space_problem(dir, bytes, int64_t(st.f_bavail) * int64_t(st.f_frsize));
}

}  // namespace zeropp
