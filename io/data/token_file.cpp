// Reading (mmap) and atomic writing of llm.c token files; see token_file.hpp.
#include "io/data/token_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>

#include "src/base/errors.hpp"

// The body is used in place as uint16_t: that needs a little-endian host
// (x86-64, aarch64, every machine we target).
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "io/data/token_file.cpp assumes a little-endian host"
#endif

namespace zeropp {

namespace {

std::string errno_text() { return std::strerror(errno); }

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error("token file " + path + ": " + what);
}

// Closes a descriptor on every path out of the constructor.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

TokenFile::TokenFile(const std::string& path) : path_(path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) fail(path, "cannot open: " + errno_text());
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) fail(path, "cannot stat: " + errno_text());
  if (!S_ISREG(st.st_mode)) fail(path, "not a regular file");
  const auto bytes = static_cast<std::size_t>(st.st_size);
  if (bytes < kTokenFileHeaderBytes) {
    fail(path, "truncated: " + std::to_string(bytes) + " bytes, shorter than the " +
                   std::to_string(kTokenFileHeaderBytes) + "-byte header");
  }
  void* m = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, f.fd, 0);
  if (m == MAP_FAILED) fail(path, "cannot map: " + errno_text());
  map_ = m;
  map_bytes_ = bytes;
  // From here on the destructor will not run if we throw: release by hand.
  try {
    int32_t header[3];
    std::memcpy(header, map_, sizeof header);
    if (header[0] != kTokenFileMagic) {
      fail(path, "wrong magic " + std::to_string(header[0]) + ", expected " +
                     std::to_string(kTokenFileMagic) + " (not an llm.c token file)");
    }
    if (header[1] != kTokenFileVersion) {
      fail(path, "unsupported version " + std::to_string(header[1]) + ", expected " +
                     std::to_string(kTokenFileVersion));
    }
    if (header[2] < 0) fail(path, "negative token count " + std::to_string(header[2]) + " in the header");
    count_ = header[2];
    const std::size_t want = kTokenFileHeaderBytes + std::size_t(count_) * sizeof(uint16_t);
    if (bytes < want) {
      fail(path, "truncated: header says " + std::to_string(count_) + " tokens (" + std::to_string(want) +
                     " bytes) but the file has " + std::to_string(bytes) + " bytes");
    }
    if (bytes > want) {
      fail(path, "header says " + std::to_string(count_) + " tokens (" + std::to_string(want) +
                     " bytes) but the file has " + std::to_string(bytes) + " bytes (trailing data)");
    }
    tokens_ = reinterpret_cast<const uint16_t*>(static_cast<const char*>(map_) + kTokenFileHeaderBytes);
  } catch (...) {
    release();
    throw;
  }
}

TokenFile::~TokenFile() { release(); }

TokenFile::TokenFile(TokenFile&& other) noexcept { *this = std::move(other); }

TokenFile& TokenFile::operator=(TokenFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    map_ = std::exchange(other.map_, nullptr);
    map_bytes_ = std::exchange(other.map_bytes_, 0);
    tokens_ = std::exchange(other.tokens_, nullptr);
    count_ = std::exchange(other.count_, 0);
  }
  return *this;
}

void TokenFile::release() {
  if (map_) ::munmap(map_, map_bytes_);
  map_ = nullptr;
  map_bytes_ = 0;
  tokens_ = nullptr;
  count_ = 0;
}

void TokenFile::check_vocab(int64_t vocab_size) const {
  for (int64_t i = 0; i < count_; ++i) {
    if (tokens_[i] >= vocab_size) {
      fail(path_, "token id " + std::to_string(tokens_[i]) + " at position " + std::to_string(i) +
                      " is outside the vocabulary (size " + std::to_string(vocab_size) + ")");
    }
  }
}

TokenFileWriter::TokenFileWriter(const std::string& path) : path_(path) {
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) fail(path, "cannot create: " + errno_text());
  const int32_t header[kTokenFileHeaderInts] = {};
  if (std::fwrite(header, sizeof header, 1, f_) != 1) fail(path, "cannot write: " + errno_text());
}

TokenFileWriter::~TokenFileWriter() {
  if (f_) std::fclose(f_);
}

void TokenFileWriter::append(const uint16_t* tokens, std::size_t count) {
  if (count_ + count > std::size_t(std::numeric_limits<int32_t>::max()))
    fail(path_, std::to_string(count_ + count) + " tokens do not fit the format's int32 count");
  if (count > 0 && std::fwrite(tokens, sizeof(uint16_t), count, f_) != count)
    fail(path_, "cannot write: " + errno_text());
  count_ += count;
}

void TokenFileWriter::close() {
  int32_t header[kTokenFileHeaderInts] = {};
  header[0] = kTokenFileMagic;
  header[1] = kTokenFileVersion;
  header[2] = static_cast<int32_t>(count_);
  bool ok = std::fseek(f_, 0, SEEK_SET) == 0 && std::fwrite(header, sizeof header, 1, f_) == 1;
  std::string err = ok ? "" : errno_text();
  // fclose flushes: its failure (e.g. a full disk) is a write failure too.
  if (std::fclose(f_) != 0 && ok) {
    ok = false;
    err = errno_text();
  }
  f_ = nullptr;
  if (!ok) fail(path_, "cannot write: " + err);
}

void write_token_file(const std::string& path, const uint16_t* tokens, std::size_t count) {
  if (count > std::size_t(std::numeric_limits<int32_t>::max())) {
    fail(path, std::to_string(count) + " tokens do not fit the format's int32 count");
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  try {
    TokenFileWriter w(tmp);
    w.append(tokens, count);
    w.close();
  } catch (const Error&) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = errno_text();
    std::remove(tmp.c_str());
    fail(path, "cannot rename " + tmp + " into place: " + err);
  }
}

void write_token_file(const std::string& path, const std::vector<uint16_t>& tokens) {
  write_token_file(path, tokens.data(), tokens.size());
}

}  // namespace zeropp
