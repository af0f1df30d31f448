#include "io/run_dir.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "src/errors.hpp"

namespace zeropp {

void make_run_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw Error("train.out_dir '" + dir + "': cannot create folder: " + (ec ? ec.message() : "not a folder"));
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
