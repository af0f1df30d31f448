// Several token files read as one sequence: what data.train / data.val name.
//
// A spec is a comma-separated list of entries (data.train / data.val are
// lists: token_file_spec joins them); each entry is a file or
// a glob pattern (* ? [...]), whose matches are taken in name order, so
// llm.c's "fineweb_train_*.bin" shards come in shard order. The files, in
// that order, are concatenated into one sequence of N tokens (positions
// 0 .. N-1); the data loader's window rule (data_loader.hpp) runs over it, so
// a window may continue from one file into the next, and past the last token
// it continues at token 0 of the first file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/data/token_file.hpp"

namespace zeropp {

// The spec of a list of entries (data.train / data.val): joined with commas.
std::string token_file_spec(const std::vector<std::string>& entries);

// The files a spec names, in order. Throws Error naming the entry when a
// pattern matches no file or an entry is empty.
std::vector<std::string> expand_token_file_spec(const std::string& spec);

class TokenFiles {
 public:
  // Opens and validates every file (TokenFile); throws Error naming it.
  explicit TokenFiles(const std::string& spec);

  const std::string& spec() const { return spec_; }
  int64_t size() const { return total_; }

  // Copies `count` tokens from position `start` (< size()), continuing at
  // position 0 after the last one.
  void read(int64_t start, int64_t count, uint16_t* out) const;

  // Throws Error naming the file, the first token id >= vocab_size and its
  // position within that file.
  void check_vocab(int64_t vocab_size) const;

 private:
  std::string spec_;
  std::vector<TokenFile> files_;
  std::vector<int64_t> starts_;  // position of each file's first token
  int64_t total_ = 0;
};

}  // namespace zeropp
