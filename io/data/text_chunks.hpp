// Reading a UTF-8 text file in bounded pieces for the tokenizer.
//
// Each chunk (about chunk_bytes, never more than max_bytes) ends just before
// a printable ASCII character that follows a line break or tab (\t \n \v \f \r):
// there GPT-2's pre-tokenisation always ends a piece (pretokenize.hpp), so
// tokenizing chunk by chunk gives the same tokens as tokenizing the whole
// file. The last chunk ends at the end of the file. Every chunk is checked to
// be UTF-8 (a cut never splits a character: it falls before an ASCII byte).
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

namespace zeropp {

class TextChunks {
 public:
  // Throws Error naming the file when it is missing, a folder or unreadable.
  explicit TextChunks(const std::string& path, std::size_t chunk_bytes = std::size_t(1) << 20,
                      std::size_t max_bytes = std::size_t(64) << 20);

  // The next chunk, valid until the next call; false at the end of the file.
  // Throws Error naming the file for invalid UTF-8 (with its offset), a read
  // error, or max_bytes without a place to cut.
  bool next(std::string_view& chunk);

  int64_t bytes_read() const { return offset_ + int64_t(buf_.size()); }

 private:
  std::string path_;
  std::ifstream in_;
  std::size_t chunk_bytes_, max_bytes_;
  std::string buf_;        // the chunk handed out last, then the bytes after it
  std::size_t given_ = 0;  // bytes of buf_ handed out by the last next()
  int64_t offset_ = 0;     // file offset of buf_[0]
};

}  // namespace zeropp
