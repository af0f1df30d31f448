// Spec expansion and reading across file boundaries; see token_files.hpp.
#include "io/data/token_files.hpp"

#include <glob.h>

#include <algorithm>
#include <cstring>

#include "src/base/errors.hpp"

namespace zeropp {

std::string token_file_spec(const std::vector<std::string>& entries) {
  std::string spec;
  for (const auto& e : entries) spec += (spec.empty() ? "" : ",") + e;
  return spec;
}

std::vector<std::string> expand_token_file_spec(const std::string& spec) {
  std::vector<std::string> paths;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = spec.find(',', begin);
    const std::string entry =
        spec.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (entry.empty()) throw Error("data files '" + spec + "': an empty entry in the list");
    if (entry.find_first_of("*?[") == std::string::npos) {
      paths.push_back(entry);
    } else {
      glob_t g{};
      const int rc = ::glob(entry.c_str(), 0, nullptr, &g);  // glob sorts the matches by name
      if (rc == 0)
        for (std::size_t i = 0; i < g.gl_pathc; ++i) paths.emplace_back(g.gl_pathv[i]);
      ::globfree(&g);
      if (rc == GLOB_NOMATCH) throw Error("data files '" + entry + "': the pattern matches no file");
      if (rc != 0)
        throw Error("data files '" + entry + "': cannot expand the pattern: " + std::strerror(errno));
    }
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return paths;
}

TokenFiles::TokenFiles(const std::string& spec) : spec_(spec) {
  for (const std::string& path : expand_token_file_spec(spec)) {
    files_.emplace_back(path);
    starts_.push_back(total_);
    total_ += files_.back().size();
  }
}

void TokenFiles::read(int64_t start, int64_t count, uint16_t* out) const {
  // The file holding `start`: the last one starting at or before it (empty
  // files share their start with the next one and are skipped by the loop).
  auto f = std::size_t(std::upper_bound(starts_.begin(), starts_.end(), start) - starts_.begin() - 1);
  int64_t pos = start - starts_[f];
  while (count > 0) {
    const int64_t k = std::min(count, files_[f].size() - pos);
    std::copy(files_[f].data() + pos, files_[f].data() + pos + k, out);
    out += k;
    count -= k;
    pos = 0;
    f = f + 1 == files_.size() ? 0 : f + 1;
  }
}

void TokenFiles::check_vocab(int64_t vocab_size) const {
  for (const TokenFile& f : files_) f.check_vocab(vocab_size);
}

}  // namespace zeropp
