#include "io/checkpoint/checkpoint_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "io/checkpoint/checkpoint.hpp"
#include "src/base/errors.hpp"

namespace zeropp {
namespace fs = std::filesystem;

namespace ckpt {

namespace {

// The step in "step_<digits>.h5", or -1.
int64_t step_of_name(const std::string& name) {
  const std::string pre = "step_", suf = ".h5";
  if (name.size() <= pre.size() + suf.size() || name.compare(0, pre.size(), pre) != 0 ||
      name.compare(name.size() - suf.size(), suf.size(), suf) != 0)
    return -1;
  const std::string digits = name.substr(pre.size(), name.size() - pre.size() - suf.size());
  if (digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoll(digits);
}

// Checkpoint files in dir, highest step first.
std::vector<std::pair<int64_t, std::string>> checkpoints_in(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), e; !ec && it != e; it.increment(ec)) {
    const std::string n = it->path().filename().string();
    const int64_t s = step_of_name(n);
    if (s >= 0 && it->is_regular_file(ec)) found.emplace_back(s, n);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second > b.second;
  });
  return found;
}

std::string read_latest(const std::string& dir) {
  std::ifstream in(join(dir, "latest"));
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
  return line;
}

}  // namespace

void fsync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) throw Error(path + ": cannot open to flush: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw Error(path + ": fsync failed: " + std::strerror(err));
}

std::string join(const std::string& dir, const std::string& name) { return (fs::path(dir) / name).string(); }

std::string tmp_name(const std::string& name) { return "." + name + ".tmp"; }

void remove_stale_temporaries(const std::string& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), e; !ec && it != e; it.increment(ec)) {
    const std::string n = it->path().filename().string();
    const bool ours =
        (n.size() > 8 && n[0] == '.' && n.compare(n.size() - 7, 7, ".h5.tmp") == 0) || n == "latest.tmp";
    if (ours) {
      std::error_code rm;
      fs::remove(it->path(), rm);
    }
  }
}

void write_latest(const std::string& dir, const std::string& name) {
  const std::string tmp = join(dir, "latest.tmp"), final_path = join(dir, "latest");
  {
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) throw Error(tmp + ": cannot create: " + std::strerror(errno));
    const std::string text = name + "\n";
    const ssize_t n = ::write(fd, text.data(), text.size());
    const int err = errno;
    const int rc = n == ssize_t(text.size()) ? ::fsync(fd) : -1;
    ::close(fd);
    if (n != ssize_t(text.size()) || rc != 0) throw Error(tmp + ": cannot write: " + std::strerror(err));
  }
  if (std::rename(tmp.c_str(), final_path.c_str()) != 0)
    throw Error(final_path + ": cannot rename " + tmp + " into place: " + std::strerror(errno));
  fsync_path(dir, true);
}

void apply_retention(const std::string& dir, int keep, const std::string& protect) {
  if (keep <= 0) return;
  const auto found = checkpoints_in(dir);
  for (size_t i = size_t(keep); i < found.size(); ++i) {
    if (found[i].second == protect) continue;
    std::error_code ec;
    fs::remove(join(dir, found[i].second), ec);
    if (ec)
      std::fprintf(stderr, "zeropp: warning: cannot remove old checkpoint %s: %s\n",
                   join(dir, found[i].second).c_str(), ec.message().c_str());
  }
}

}  // namespace ckpt

using namespace ckpt;

std::string checkpoint_name(int64_t step) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "step_%08lld.h5", static_cast<long long>(step));
  return buf;
}

std::string resolve_checkpoint(const std::string& spec, const std::string& dir) {
  std::error_code ec;
  std::string d;
  if (spec == "auto") {
    d = dir;
  } else if (fs::is_directory(spec, ec)) {
    d = spec;
  } else {
    if (!fs::exists(spec, ec)) throw Error("checkpoint " + spec + ": no such file");
    return spec;
  }
  const auto found = checkpoint_candidates(d);
  return found.empty() ? "" : found.front();
}

std::vector<std::string> checkpoint_candidates(const std::string& dir) {
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return {};
  std::vector<std::string> out;
  const std::string latest = read_latest(dir);
  if (!latest.empty() && latest.find('/') == std::string::npos && fs::is_regular_file(join(dir, latest), ec))
    out.push_back(join(dir, latest));
  for (const auto& f : checkpoints_in(dir))
    if (f.second != latest) out.push_back(join(dir, f.second));
  return out;
}

}  // namespace zeropp
