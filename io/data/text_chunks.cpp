// Chunked reading of UTF-8 text; see text_chunks.hpp.
#include "io/data/text_chunks.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "io/tokenizer/utf8.hpp"
#include "src/base/errors.hpp"

namespace zeropp {

namespace {

bool is_break(char c) { return c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// Last p in (0, n) with s[p-1] a break and s[p] printable ASCII, or 0.
std::size_t last_cut(const std::string& s) {
  if (s.size() < 2) return 0;
  for (std::size_t p = s.size() - 1; p > 0; --p)
    if (s[p] > ' ' && s[p] < 0x7F && is_break(s[p - 1])) return p;
  return 0;
}

}  // namespace

TextChunks::TextChunks(const std::string& path, std::size_t chunk_bytes, std::size_t max_bytes)
    : path_(path), chunk_bytes_(chunk_bytes), max_bytes_(max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error("input " + path + ": is a directory, not a text file");
  in_.open(path, std::ios::binary);
  if (!in_) throw Error("input " + path + ": cannot open: " + std::strerror(errno));
}

bool TextChunks::next(std::string_view& chunk) {
  buf_.erase(0, given_);
  offset_ += int64_t(given_);
  given_ = 0;
  std::size_t cut = 0;
  while (true) {
    const std::size_t had = buf_.size();
    buf_.resize(had + chunk_bytes_);
    in_.read(&buf_[had], std::streamsize(chunk_bytes_));
    buf_.resize(had + std::size_t(in_.gcount()));
    if (in_.bad()) throw Error("input " + path_ + ": read error at offset " + std::to_string(bytes_read()));
    if (in_.eof()) {
      cut = buf_.size();
      break;
    }
    if ((cut = last_cut(buf_)) > 0) break;
    if (buf_.size() >= max_bytes_)
      throw Error("input " + path_ + ": no line break followed by text in " +
                  std::to_string(max_bytes_ >> 20) + " MiB from offset " + std::to_string(offset_) +
                  " (text is read in pieces cut at line breaks)");
  }
  if (cut == 0) return false;
  chunk = std::string_view(buf_.data(), cut);
  if (const int64_t bad = first_invalid_utf8(chunk); bad >= 0)
    throw Error(invalid_utf8_message("input " + path_, chunk, bad, offset_));
  given_ = cut;
  return true;
}

}  // namespace zeropp
