#include "io/files/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "io/checkpoint/checkpoint_files.hpp"
#include "src/base/errors.hpp"

namespace zeropp {
namespace fs = std::filesystem;

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
  const fs::path p(path);
  tmp_ = (p.parent_path() / ckpt::tmp_name(p.filename().string())).string();
  f_ = std::fopen(tmp_.c_str(), "wb");
  if (!f_) throw Error(path_ + ": cannot create " + tmp_ + ": " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (!f_) return;
  std::fclose(f_);
  std::remove(tmp_.c_str());
}

void AtomicFile::write(const void* data, size_t n) {
  if (n > 0 && std::fwrite(data, 1, n, f_) != n)
    throw Error(path_ + ": cannot write " + tmp_ + ": " + std::strerror(errno));
}

void AtomicFile::commit() {
  const bool flushed = std::fflush(f_) == 0 && ::fsync(::fileno(f_)) == 0;
  const int err = errno;
  const bool closed = std::fclose(f_) == 0;
  f_ = nullptr;
  if (!flushed || !closed) {
    std::remove(tmp_.c_str());
    throw Error(path_ + ": cannot write " + tmp_ + ": " + std::strerror(flushed ? errno : err));
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp_.c_str());
    throw Error(path_ + ": cannot rename " + tmp_ + " into place: " + std::strerror(e));
  }
  const fs::path dir = fs::path(path_).parent_path();
  ckpt::fsync_path(dir.empty() ? "." : dir.string(), true);
}

}  // namespace zeropp
