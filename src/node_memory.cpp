#include "src/node_memory.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "src/errors.hpp"

namespace zeropp {

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// cgroup v1 reports "no limit" as a huge number (LONG_MAX rounded to pages).
constexpr int64_t kNoLimit = int64_t(1) << 60;

}  // namespace

std::optional<int64_t> parse_byte_count(const std::string& text) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (v < 0) return std::nullopt;
  const std::string suffix = text.substr(used);
  const std::string units = "KMGT";
  if (suffix.empty()) return int64_t(v);
  const auto k = units.find(suffix);
  if (suffix.size() != 1 || k == std::string::npos) return std::nullopt;
  return int64_t(v) << (10 * (k + 1));
}

std::optional<int64_t> parse_meminfo_available(const std::string& meminfo) {
  const std::string key = "MemAvailable:";
  const auto at = meminfo.find(key);
  if (at == std::string::npos) return std::nullopt;
  std::istringstream line(meminfo.substr(at + key.size()));
  long long kib = -1;
  std::string unit;
  if (!(line >> kib >> unit) || kib < 0 || unit != "kB") return std::nullopt;
  return int64_t(kib) * 1024;
}

std::optional<int64_t> parse_cgroup_room(const std::string& limit, const std::string& usage) {
  const auto l = parse_byte_count(limit.substr(0, limit.find_first_of(" \n")));
  const auto u = parse_byte_count(usage.substr(0, usage.find_first_of(" \n")));
  if (!l || *l >= kNoLimit) return std::nullopt;  // "max" (v2) or the v1 sentinel
  return std::max<int64_t>(0, *l - (u ? *u : 0));
}

NodeMemory node_memory() {
  if (const char* env = std::getenv("ZEROPP_MEMORY_AVAILABLE")) {
    const auto b = parse_byte_count(env);
    if (!b)
      throw Error(std::string("ZEROPP_MEMORY_AVAILABLE = '") + env +
                  "': expected a number of bytes, optionally with K, M, G or T");
    return {*b, "ZEROPP_MEMORY_AVAILABLE"};
  }
  const auto avail = parse_meminfo_available(read_file("/proc/meminfo"));
  if (!avail)
    throw Error(
        "/proc/meminfo: no MemAvailable line; set ZEROPP_MEMORY_AVAILABLE to the bytes this node offers");
  NodeMemory m{*avail, "MemAvailable"};
  const char* limits[][2] = {
      {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
      {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"}};
  for (const auto& f : limits) {
    const auto room = parse_cgroup_room(read_file(f[0]), read_file(f[1]));
    if (room && *room < m.bytes) m = {*room, "cgroup limit"};
  }
  return m;
}

}  // namespace zeropp
