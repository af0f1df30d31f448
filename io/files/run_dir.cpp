#include "io/files/run_dir.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "src/base/errors.hpp"

namespace zeropp {

void make_run_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw Error("train.out_dir '" + dir + "': cannot create folder: " + (ec ? ec.message() : "not a folder"));
}

void check_writable_dir(const std::string& dir, const std::string& key) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec);
  while (!ec && !fs::exists(p, ec) && p.has_parent_path() && p != p.parent_path()) p = p.parent_path();
  if (ec || !fs::is_directory(p, ec))
    throw Error(key + " '" + dir + "': " + p.string() + " is not a folder" + (ec ? ": " + ec.message() : ""));
  const std::string probe = (p / (".zeropp-write-test." + std::to_string(getpid()))).string();
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0)
    throw Error(key + " '" + dir + "': cannot write in " + p.string() + ": " + std::strerror(errno));
  close(fd);
  unlink(probe.c_str());
}

void write_text_atomic(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name, tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw Error(tmp + ": cannot write: " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(path + ": cannot rename into place: " + std::strerror(errno));
  }
}

}  // namespace zeropp
