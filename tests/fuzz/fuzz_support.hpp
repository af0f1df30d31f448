// What the harnesses share: a private folder for the readers that want a path,
// inputs that hold several files, and the project's rule for rejections (one
// line, naming the file), which a harness enforces by aborting: a finding.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "src/base/errors.hpp"

namespace zeropp::fuzz {

// A folder of this process's own under $TMPDIR, removed at a normal exit.
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/zeropp-fuzz.XXXXXX";
    if (!mkdtemp(templ.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    static const std::string made = templ;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(made, ec);
    });
    return templ;
  }();
  return dir;
}

// Writes `bytes` to scratch_dir()/name and returns its path.
inline std::string write_scratch(const std::string& name, const std::string& bytes) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  out.close();
  if (!out) {
    std::perror(path.c_str());
    std::abort();
  }
  return path;
}

// The input as up to `parts` texts separated by NUL bytes (the last takes the rest).
inline std::vector<std::string> split_input(const uint8_t* data, size_t size, size_t parts) {
  std::vector<std::string> out(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0 && out.size() < parts)
      out.emplace_back();
    else
      out.back().push_back(char(data[i]));
  }
  out.resize(parts);
  return out;
}

// A rejection must be one non-empty line that names `name` (a file, or what
// the user typed); anything else is reported and ends the run as a finding.
inline void expect_one_line(const Error& e, const std::vector<std::string>& names) {
  const std::string m = e.what();
  bool named = false;
  for (const std::string& n : names) named = named || m.find(n) != std::string::npos;
  if (m.empty() || m.find('\n') != std::string::npos || !named) {
    std::fprintf(stderr, "rejection is not one line naming the file: [%s]\n", m.c_str());
    std::abort();
  }
}

}  // namespace zeropp::fuzz
