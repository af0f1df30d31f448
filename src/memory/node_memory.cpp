#include "src/memory/node_memory.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "src/base/errors.hpp"

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
  const int shift = 10 * int(k + 1);
  if (v > (INT64_MAX >> shift)) return std::nullopt;
  return int64_t(v) << shift;
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

std::vector<std::string> cgroup_memory_dirs(const std::string& proc_self_cgroup) {
  std::vector<std::string> dirs;
  std::istringstream in(proc_self_cgroup);
  for (std::string line; std::getline(in, line);) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = "," + line.substr(a + 1, b - a - 1) + ",", path = line.substr(b + 1);
    std::string root;
    if (controllers == ",,")
      root = "/sys/fs/cgroup";  // v2
    else if (controllers.find(",memory,") != std::string::npos)
      root = "/sys/fs/cgroup/memory";  // v1
    else
      continue;
    if (path != "/") dirs.push_back(root + path);
    dirs.push_back(root);
  }
  return dirs;
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
  for (const std::string& dir : cgroup_memory_dirs(read_file("/proc/self/cgroup"))) {
    const char* files[][2] = {{"/memory.max", "/memory.current"},                     // v2
                              {"/memory.limit_in_bytes", "/memory.usage_in_bytes"}};  // v1
    for (const auto& f : files) {
      const auto room = parse_cgroup_room(read_file(dir + f[0]), read_file(dir + f[1]));
      if (room && *room < m.bytes) m = {*room, "cgroup limit"};
    }
  }
  return m;
}

}  // namespace zeropp
