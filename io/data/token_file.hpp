// Token files in llm.c's format, so datasets prepared for llm.c work unchanged.
//
// Layout (all little-endian):
//   header: 256 int32 — [0] magic 20240520, [1] version 1, [2] token count N,
//           the rest zero;
//   body:   N uint16 token ids.
// A file is read with mmap: ranks on one node then share the page cache
// instead of each holding a copy. Writing goes through `<path>.tmp.<pid>` and
// a rename, so an existing file is never left half-overwritten (and a reader
// that has the old file mapped keeps seeing the old inode).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace zeropp {

constexpr int32_t kTokenFileMagic = 20240520;
constexpr int32_t kTokenFileVersion = 1;
constexpr std::size_t kTokenFileHeaderInts = 256;
constexpr std::size_t kTokenFileHeaderBytes = kTokenFileHeaderInts * sizeof(int32_t);

// A validated, read-only token file. Throws zeropp::Error (one line naming the
// path) when the file is missing or unreadable, has a wrong magic or version,
// or is shorter or longer than its header says.
class TokenFile {
 public:
  explicit TokenFile(const std::string& path);
  ~TokenFile();
  TokenFile(TokenFile&& other) noexcept;
  TokenFile& operator=(TokenFile&& other) noexcept;
  TokenFile(const TokenFile&) = delete;
  TokenFile& operator=(const TokenFile&) = delete;

  const std::string& path() const { return path_; }
  int64_t size() const { return count_; }
  const uint16_t* data() const { return tokens_; }
  uint16_t operator[](int64_t i) const { return tokens_[i]; }

  // Throws Error naming the path, the first token id >= vocab_size and its
  // position (0-based, counted from the first token after the header).
  void check_vocab(int64_t vocab_size) const;

 private:
  void release();

  std::string path_;
  void* map_ = nullptr;
  std::size_t map_bytes_ = 0;
  const uint16_t* tokens_ = nullptr;
  int64_t count_ = 0;
};

// Writes a token file in pieces (for streams longer than memory): the header
// is written again with the final count by close(). No temporary file: write
// into a folder nobody reads yet. Throws Error naming the path.
class TokenFileWriter {
 public:
  explicit TokenFileWriter(const std::string& path);
  ~TokenFileWriter();  // closes without checking, if close() was not called
  TokenFileWriter(const TokenFileWriter&) = delete;
  TokenFileWriter& operator=(const TokenFileWriter&) = delete;

  void append(const uint16_t* tokens, std::size_t count);
  void close();
  std::size_t count() const { return count_; }

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
  std::size_t count_ = 0;
};

// Writes tokens to `path` atomically (temporary file + rename). Throws Error
// naming the path when it cannot be written or holds more than INT32_MAX tokens.
void write_token_file(const std::string& path, const uint16_t* tokens, std::size_t count);
void write_token_file(const std::string& path, const std::vector<uint16_t>& tokens);

}  // namespace zeropp
