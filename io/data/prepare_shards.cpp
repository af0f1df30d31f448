// Streaming tokenization into shards; see prepare_shards.hpp.
#include "io/data/prepare_shards.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <sstream>

#include "io/data/text_chunks.hpp"
#include "io/data/token_file.hpp"
#include "io/tokenizer/bpe.hpp"
#include "io/tokenizer/tokenizer_files.hpp"
#include "src/base/errors.hpp"

namespace zeropp {

namespace fs = std::filesystem;

namespace {

std::string shard_name(const char* split, int index) {
  char name[32];
  std::snprintf(name, sizeof name, "%s_%06d.bin", split, index);
  return name;
}

bool is_shard_name(const std::string& name) {
  for (const char* split : {"val_", "train_"}) {
    const std::string s(split);
    if (name.size() == s.size() + 10 && name.compare(0, s.size(), s) == 0 &&
        name.compare(name.size() - 4, 4, ".bin") == 0 &&
        name.find_first_not_of("0123456789", s.size()) == name.size() - 4)
      return true;
  }
  return false;
}

// Cuts the token stream into val shards, then train shards, in `dir`.
class ShardSink {
 public:
  ShardSink(std::string dir, int64_t shard_tokens, int64_t val_tokens)
      : dir_(std::move(dir)), shard_tokens_(shard_tokens), val_left_(val_tokens) {}

  void append(const std::vector<uint32_t>& ids) {
    buf_.assign(ids.begin(), ids.end());  // ids < 65536: checked with the vocabulary
    const uint16_t* p = buf_.data();
    std::size_t n = buf_.size();
    while (n > 0) {
      if (!file_ || int64_t(file_->count()) == shard_tokens_ || (in_val_ && val_left_ == 0)) open_next();
      int64_t room = shard_tokens_ - int64_t(file_->count());
      if (in_val_) room = std::min(room, val_left_);
      const auto k = std::size_t(std::min<int64_t>(room, int64_t(n)));
      file_->append(p, k);
      (in_val_ ? stats_val_ : stats_train_) += int64_t(k);
      if (in_val_) val_left_ -= int64_t(k);
      p += k;
      n -= k;
    }
  }

  void close() {
    if (file_) file_->close();
    file_.reset();
  }

  int64_t val_tokens() const { return stats_val_; }
  int64_t train_tokens() const { return stats_train_; }
  int val_shards() const { return val_shards_; }
  int train_shards() const { return train_shards_; }

 private:
  void open_next() {
    close();
    if (in_val_ && val_left_ == 0) in_val_ = false;
    const std::string name =
        in_val_ ? shard_name("val", val_shards_++) : shard_name("train", train_shards_++);
    file_ = std::make_unique<TokenFileWriter>((fs::path(dir_) / name).string());
  }

  std::string dir_;
  int64_t shard_tokens_, val_left_;
  bool in_val_ = true;
  std::unique_ptr<TokenFileWriter> file_;
  std::vector<uint16_t> buf_;
  int64_t stats_val_ = 0, stats_train_ = 0;
  int val_shards_ = 0, train_shards_ = 0;
};

// Removes a folder on every way out unless its path was cleared.
struct TempDir {
  std::string path;
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

void check_count(const char* option, int64_t v) {
  if (v < 2 || v > int64_t(std::numeric_limits<int32_t>::max()))
    throw Error(std::string(option) + " " + std::to_string(v) + ": must lie in 2 .. 2147483647");
}

}  // namespace

std::string ShardStats::summary() const {
  std::ostringstream os;
  const auto plural = [](int n) { return n == 1 ? " shard, " : " shards, "; };
  os << "prepare-data: " << input_bytes << " bytes -> " << (fs::path(out_dir) / "val_*.bin").string() << " ("
     << val_shards << plural(val_shards) << val_tokens << " tokens), "
     << (fs::path(out_dir) / "train_*.bin").string() << " (" << train_shards << plural(train_shards)
     << train_tokens << " tokens); ";
  os.precision(3);
  os << (seconds > 0 ? double(input_bytes) / 1e6 / seconds : 0.0) << " MB/s";
  return os.str();
}

ShardStats prepare_shards(const std::vector<std::string>& inputs, const std::string& out_dir,
                          const std::string& tokenizer_dir, int64_t shard_tokens, int64_t val_tokens) {
  check_count("--shard-tokens", shard_tokens);
  check_count("--val-tokens", val_tokens);
  if (inputs.empty()) throw Error("prepare-data: no --input");
  const BpeTokenizer tok(load_vocab_dir(tokenizer_dir));
  if (tok.vocab_size() > 65536)
    throw Error("tokenizer " + tokenizer_dir + ": " + std::to_string(tok.vocab_size()) +
                " tokens do not fit the shards' 16-bit ids");
  for (const std::string& in : inputs) TextChunks check(in);  // missing inputs fail before any work

  std::error_code ec;
  // A folder made here goes again on failure: a failed run leaves nothing behind.
  fs::path top = out_dir;  // the outermost folder that does not exist yet
  while (top.has_parent_path() && !fs::exists(top.parent_path(), ec)) top = top.parent_path();
  TempDir made{fs::create_directories(out_dir, ec) ? top.string() : ""};
  if (ec) throw Error("output directory " + out_dir + ": cannot create: " + ec.message());
  if (!fs::is_directory(out_dir, ec)) throw Error("output directory " + out_dir + ": is not a directory");
  TempDir tmp{(fs::path(out_dir) / (".prepare-data.tmp." + std::to_string(::getpid()))).string()};
  fs::remove_all(tmp.path, ec);
  if (!fs::create_directory(tmp.path, ec))
    throw Error("output directory " + out_dir + ": cannot create " + tmp.path + ": " + ec.message());

  const auto t0 = std::chrono::steady_clock::now();
  ShardSink sink(tmp.path, shard_tokens, val_tokens);
  ShardStats st;
  st.out_dir = out_dir;
  std::vector<uint32_t> ids;
  for (std::size_t f = 0; f < inputs.size(); ++f) {
    if (f > 0) sink.append({tok.end_of_text()});
    TextChunks chunks(inputs[f]);
    std::string_view chunk;
    while (chunks.next(chunk)) {
      ids.clear();
      tok.encode(chunk, ids);
      sink.append(ids);
    }
    st.input_bytes += chunks.bytes_read();
  }
  sink.close();
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  st.val_tokens = sink.val_tokens();
  st.train_tokens = sink.train_tokens();
  st.val_shards = sink.val_shards();
  st.train_shards = sink.train_shards();
  if (st.train_tokens < 2) {
    std::ostringstream os;
    os << "input " << inputs.front() << (inputs.size() > 1 ? " (and the others)" : "")
       << ": too small: " << st.val_tokens + st.train_tokens << " tokens leave " << st.train_tokens
       << " for training after --val-tokens " << val_tokens << "; need at least 2 (lower --val-tokens)";
    throw Error(os.str());
  }

  // Commit: old shards out, new ones in (renames within one folder).
  for (const auto& e : fs::directory_iterator(out_dir))
    if (e.is_regular_file() && is_shard_name(e.path().filename().string())) fs::remove(e.path());
  for (const auto& e : fs::directory_iterator(tmp.path)) {
    fs::rename(e.path(), fs::path(out_dir) / e.path().filename(), ec);
    if (ec)
      throw Error("output directory " + out_dir + ": cannot move " + e.path().string() +
                  " in: " + ec.message());
  }
  made.path.clear();
  return st;
}

}  // namespace zeropp
