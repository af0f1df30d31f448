#include "io/checkpoint/checkpoint_metadata.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <vector>

#include "src/base/errors.hpp"

namespace zeropp::ckpt {

namespace {

class Packer {
 public:
  void u64(uint64_t v) { raw(&v, sizeof v); }
  void i64(int64_t v) { raw(&v, sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  void i64s(const std::vector<int64_t>& v) {
    u64(v.size());
    raw(v.data(), v.size() * sizeof(int64_t));
  }
  void f64s(const std::vector<double>& v) {
    u64(v.size());
    raw(v.data(), v.size() * sizeof(double));
  }
  void u64s(const std::vector<uint64_t>& v) {
    u64(v.size());
    raw(v.data(), v.size() * sizeof(uint64_t));
  }
  std::string& bytes() { return buf_; }

 private:
  void raw(const void* p, size_t n) { buf_.append(static_cast<const char*>(p), n); }
  std::string buf_;
};

// Reads what Packer wrote; bytes that end early or run on are an Error naming
// `where`, and a length is checked against what is left before anything is
// allocated for it.
class Unpacker {
 public:
  Unpacker(const std::string& b, const std::string& where) : buf_(b), where_(where) {}
  uint64_t u64() {
    uint64_t v;
    raw(&v, sizeof v);
    return v;
  }
  int64_t i64() {
    int64_t v;
    raw(&v, sizeof v);
    return v;
  }
  // An int that Packer wrote as an i64: another value is not what it packed.
  int small_int(const char* what) {
    const int64_t v = i64();
    if (v < INT_MIN || v > INT_MAX)
      throw Error(where_ + ": checkpoint metadata: " + what + " = " + std::to_string(v) + " is not an int");
    return int(v);
  }
  bool flag(const char* what) {
    const uint64_t v = u64();
    if (v > 1)
      throw Error(where_ + ": checkpoint metadata: " + what + " = " + std::to_string(v) + ", not 0 or 1");
    return v != 0;
  }
  std::string str() {
    std::string s(count(1), '\0');
    raw(s.data(), s.size());
    return s;
  }
  template <class T>
  std::vector<T> vec() {
    std::vector<T> v(count(sizeof(T)));
    raw(v.data(), v.size() * sizeof(T));
    return v;
  }
  void finish() const {
    if (pos_ != buf_.size())
      throw Error(where_ + ": checkpoint metadata has " + std::to_string(buf_.size() - pos_) +
                  " bytes after its end");
  }

 private:
  // A length prefix for elements of `size` bytes, checked against the bytes left.
  size_t count(size_t size) {
    const uint64_t n = u64();
    if (n > (buf_.size() - pos_) / size) truncated(n * size);
    return size_t(n);
  }
  void raw(void* p, size_t n) {
    if (n > buf_.size() - pos_) truncated(n);
    if (n > 0) std::memcpy(p, buf_.data() + pos_, n);  // an empty vector's data() may be null
    pos_ += n;
  }
  [[noreturn]] void truncated(uint64_t n) const {
    throw Error(where_ + ": checkpoint metadata ends early (" + std::to_string(n) + " bytes wanted at byte " +
                std::to_string(pos_) + " of " + std::to_string(buf_.size()) + ")");
  }
  const std::string& buf_;
  const std::string& where_;
  size_t pos_ = 0;
};

}  // namespace

std::string pack_scan(const Scan& s) {
  Packer p;
  const CheckpointMeta& m = s.meta;
  p.i64(m.step);
  p.i64(m.tokens_seen);
  p.u64(m.seed);
  p.str(m.deck_toml);
  p.str(m.zero_toml);
  p.str(m.code_version);
  p.i64(m.world_size);
  p.i64(m.ranks_per_node);
  p.i64(m.nodes);
  p.u64(m.scalars.size());
  for (const auto& [k, v] : m.scalars) {
    p.str(k);
    p.f64s(v);
  }
  p.u64(m.words.size());
  for (const auto& [k, v] : m.words) {
    p.str(k);
    p.u64s(v);
  }
  p.i64(s.format_version);
  p.i64(s.bytes);
  p.u64(s.datasets.size());
  for (const ScannedDataset& d : s.datasets) {
    p.str(d.report.path);
    p.i64s(d.report.shape);
    p.str(d.report.dtype);
    p.u64(d.report.stored_checksum);
    p.u64(d.report.computed_checksum);
    p.u64(d.report.checksum_ok);
    p.str(d.report.problem);
    p.u64(d.has_checksum);
  }
  return std::move(p.bytes());
}

Scan unpack_scan(const std::string& b, const std::string& where) {
  Unpacker u(b, where);
  Scan s;
  CheckpointMeta& m = s.meta;
  m.step = u.i64();
  m.tokens_seen = u.i64();
  m.seed = u.u64();
  m.deck_toml = u.str();
  m.zero_toml = u.str();
  m.code_version = u.str();
  m.world_size = u.small_int("world_size");
  m.ranks_per_node = u.small_int("ranks_per_node");
  m.nodes = u.small_int("nodes");
  for (uint64_t i = 0, n = u.u64(); i < n; ++i) {
    std::string k = u.str();
    m.scalars.emplace_back(std::move(k), u.vec<double>());
  }
  for (uint64_t i = 0, n = u.u64(); i < n; ++i) {
    std::string k = u.str();
    m.words.emplace_back(std::move(k), u.vec<uint64_t>());
  }
  s.format_version = u.small_int("format_version");
  s.bytes = u.i64();
  for (uint64_t i = 0, n = u.u64(); i < n; ++i) {
    ScannedDataset d;
    d.report.path = u.str();
    d.report.shape = u.vec<int64_t>();
    d.report.dtype = u.str();
    d.report.stored_checksum = u.u64();
    d.report.computed_checksum = u.u64();
    d.report.checksum_ok = u.flag("checksum_ok");
    d.report.problem = u.str();
    d.has_checksum = u.flag("has_checksum");
    s.datasets.push_back(std::move(d));
  }
  u.finish();
  return s;
}

void bcast_string(MPI_Comm comm, std::string& s) {
  uint64_t n = s.size();
  ZCHECK_MPI(MPI_Bcast(&n, 1, MPI_UINT64_T, 0, comm));
  s.resize(size_t(n));
  size_t off = 0;
  while (off < n) {  // in pieces below INT_MAX
    const int len = int(std::min<uint64_t>(n - off, uint64_t(1) << 30));
    ZCHECK_MPI(MPI_Bcast(s.data() + off, len, MPI_CHAR, 0, comm));
    off += size_t(len);
  }
}

}  // namespace zeropp::ckpt
