// A file written whole or not at all: bytes go to ".<name>.tmp" beside the
// target, and commit() fsyncs and renames it into place. Destroyed without
// commit() (an error on the way), the temporary file is removed and the
// target, if it exists, is untouched.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace zeropp {

class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path);  // Error naming the file if it cannot be created
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t n);  // Error naming the file on failure (disk full, ...)
  void commit();                           // fsync, rename over the target, fsync the directory

 private:
  std::string path_, tmp_;
  std::FILE* f_ = nullptr;
};

}  // namespace zeropp
