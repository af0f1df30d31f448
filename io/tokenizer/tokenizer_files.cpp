// Vocabulary files <-> BpeVocab; the layouts are in tokenizer_files.hpp.
#include "io/tokenizer/tokenizer_files.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "io/files/run_dir.hpp"
#include "io/tokenizer/byte_unicode.hpp"
#include "src/base/errors.hpp"

namespace zeropp {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw Error(path + ": " + what); }

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) fail(path, "missing or not a regular file");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in) fail(path, "cannot read");
  return s.str();
}

json parse_json(const std::string& path) {
  try {
    return json::parse(read_file(path));
  } catch (const json::exception& e) {
    fail(path, std::string("not valid JSON: ") + e.what());
  }
}

// A token's text for a message: in JSON's quotes and escapes (one line; bytes
// that are not UTF-8 shown as U+FFFD).
std::string json_quoted(const std::string& text) {
  return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

// Builds the token table from (text -> id) entries: ids 0 .. N-1 once each,
// text in GPT-2's byte alphabet. `where` names the file (and key) in errors;
// `entries` is how many there are, so no id at or above it can be dense.
class TokenTable {
 public:
  TokenTable(std::string where, std::size_t entries) : where_(std::move(where)), entries_(entries) {}

  void add(const std::string& text, const json& id) {
    if (!id.is_number_unsigned())
      fail(where_, "token " + json_quoted(text) + " has id " + id.dump() + ", not an unsigned integer");
    const auto i = id.get<uint64_t>();
    if (i >= entries_)
      fail(where_, "token " + json_quoted(text) + " has id " + std::to_string(i) + "; " +
                       std::to_string(entries_) + " tokens must have ids 0 .. " +
                       std::to_string(entries_ - 1));
    std::string bytes;
    if (!vocab_text_to_bytes(text, bytes))
      fail(where_, "token " + json_quoted(text) + " is not written in GPT-2's byte alphabet");
    if (i >= tokens_.size()) tokens_.resize(i + 1), set_.resize(i + 1);
    if (set_[i] && tokens_[i] != bytes) fail(where_, "id " + std::to_string(i) + " is used twice");
    set_[i] = true;
    tokens_[i] = bytes;
  }

  // The table, checked: dense ids, every byte, the end-of-text token.
  BpeVocab finish() {
    BpeVocab v;
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
      if (!set_[i]) fail(where_, "no token has id " + std::to_string(i) + " (ids must be 0 .. N-1)");
      if (!id_of_.emplace(tokens_[i], uint32_t(i)).second)
        fail(where_, "token " + json_quoted(bytes_to_vocab_text(tokens_[i])) + " appears twice");
    }
    for (unsigned b = 0; b < 256; ++b)
      if (!id_of_.count(std::string(1, char(b))))
        fail(where_, "no token for the single byte " + std::to_string(b) + " (\"" +
                         bytes_to_vocab_text(std::string(1, char(b))) + "\")");
    const auto eot = id_of_.find(std::string(kEndOfText));
    if (eot == id_of_.end()) fail(where_, "no token " + std::string(kEndOfText));
    v.end_of_text = eot->second;
    v.tokens = tokens_;
    return v;
  }

  // The merge LEFT RIGHT; `where` names the file and line or index.
  BpeVocab::Merge merge(const std::string& where, const std::string& left, const std::string& right) const {
    const auto id = [&](const std::string& text) {
      std::string bytes;
      if (!vocab_text_to_bytes(text, bytes))
        fail(where, json_quoted(text) + " is not written in GPT-2's byte alphabet");
      const auto it = id_of_.find(bytes);
      if (it == id_of_.end()) fail(where, json_quoted(text) + " is not in the vocabulary " + where_);
      return it->second;
    };
    return {id(left), id(right), id(left + right)};
  }

 private:
  std::string where_;
  std::size_t entries_;
  std::vector<std::string> tokens_;
  std::vector<bool> set_;
  std::unordered_map<std::string, uint32_t> id_of_;
};

// "LEFT RIGHT" -> the two halves; false unless exactly one space splits two
// non-empty parts.
bool split_merge(const std::string& line, std::string& left, std::string& right) {
  const std::size_t sp = line.find(' ');
  if (sp == std::string::npos || sp == 0 || sp + 1 == line.size() ||
      line.find(' ', sp + 1) != std::string::npos)
    return false;
  left = line.substr(0, sp);
  right = line.substr(sp + 1);
  return true;
}

void add_merge(BpeVocab& v, std::unordered_map<uint64_t, std::size_t>& seen, const std::string& where,
               BpeVocab::Merge m) {
  const uint64_t key = uint64_t(m.left) << 32 | m.right;
  if (!seen.emplace(key, v.merges.size()).second)
    fail(where, "repeats the merge of line/entry " + std::to_string(seen[key] + 1));
  v.merges.push_back(m);
}

}  // namespace

BpeVocab load_gpt2_vocab(const std::string& encoder_json, const std::string& vocab_bpe) {
  const json enc = parse_json(encoder_json);
  if (!enc.is_object()) fail(encoder_json, "must be a JSON object of token -> id");
  TokenTable table(encoder_json, enc.size());
  for (const auto& [text, id] : enc.items()) table.add(text, id);
  BpeVocab v = table.finish();

  std::istringstream lines(read_file(vocab_bpe));
  std::unordered_map<uint64_t, std::size_t> seen;
  std::string line, left, right;
  bool blank = false;  // only trailing blank lines are allowed
  for (int n = 1; std::getline(lines, line); ++n) {
    const std::string where = vocab_bpe + " line " + std::to_string(n);
    if (n == 1 && line.rfind("#version", 0) == 0) continue;
    if (line.empty()) {
      blank = true;
      continue;
    }
    if (blank) fail(where, "a merge after a blank line");
    if (!split_merge(line, left, right))
      fail(where, json_quoted(line) + " is not two tokens separated by one space");
    add_merge(v, seen, where, table.merge(where, left, right));
  }
  return v;
}

BpeVocab load_tokenizer_json(const std::string& path) {
  const json doc = parse_json(path);
  const auto at = [&](const json& obj, const char* key, const std::string& name) -> const json& {
    if (!obj.is_object() || !obj.contains(key)) fail(path, "has no " + name);
    return obj[key];
  };
  const json& model = at(doc, "model", "\"model\"");
  const json& type = at(model, "type", "model.type");
  if (type != "BPE") fail(path, "model.type is " + type.dump() + "; only \"BPE\" is read");
  const json& pre = at(doc, "pre_tokenizer", "pre_tokenizer");
  if (!pre.is_object() || pre.value("type", json()) != "ByteLevel" ||
      pre.value("add_prefix_space", false) != false || pre.value("use_regex", true) != true)
    fail(path, "pre_tokenizer is " + pre.dump() +
                   "; only GPT-2's ByteLevel (its pattern, no add_prefix_space) is read");
  const json& vocab = at(model, "vocab", "model.vocab");
  if (!vocab.is_object()) fail(path, "model.vocab must be a JSON object of token -> id");
  const json none = json::array();
  const json& added = doc.contains("added_tokens") ? doc["added_tokens"] : none;
  if (!added.is_array()) fail(path, "added_tokens must be an array");
  TokenTable table(path, vocab.size() + added.size());
  for (const auto& [text, id] : vocab.items()) table.add(text, id);
  for (const json& t : added) {
    if (!t.is_object() || !t.contains("id") || !t.contains("content") || !t["content"].is_string())
      fail(path, "added_tokens entry " + t.dump() + " needs \"id\" and \"content\"");
    table.add(t["content"].get<std::string>(), t["id"]);
  }
  BpeVocab v = table.finish();
  const json& merges = at(model, "merges", "model.merges");
  if (!merges.is_array()) fail(path, "model.merges must be an array");
  std::unordered_map<uint64_t, std::size_t> seen;
  std::string left, right;
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const std::string where = path + " model.merges[" + std::to_string(i) + "]";
    const json& m = merges[i];
    if (m.is_string()) {
      if (!split_merge(m.get<std::string>(), left, right))
        fail(where, m.dump() + " is not two tokens separated by one space");
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      left = m[0].get<std::string>();
      right = m[1].get<std::string>();
    } else {
      fail(where, m.dump() + " is neither \"LEFT RIGHT\" nor [LEFT, RIGHT]");
    }
    add_merge(v, seen, where, table.merge(where, left, right));
  }
  return v;
}

BpeVocab load_vocab_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail("tokenizer " + dir, "is not a folder");
  const fs::path d(dir);
  if (fs::exists(d / "encoder.json", ec) || fs::exists(d / "vocab.bpe", ec))
    return load_gpt2_vocab((d / "encoder.json").string(), (d / "vocab.bpe").string());
  if (fs::exists(d / "tokenizer.json", ec)) return load_tokenizer_json((d / "tokenizer.json").string());
  fail("tokenizer " + dir, "holds neither encoder.json + vocab.bpe nor tokenizer.json");
}

void write_gpt2_vocab(const std::string& dir, const BpeVocab& vocab) {
  json enc = json::object();
  for (std::size_t id = 0; id < vocab.tokens.size(); ++id) enc[bytes_to_vocab_text(vocab.tokens[id])] = id;
  std::string merges = "#version: 0.2\n";
  for (const auto& m : vocab.merges)
    merges +=
        bytes_to_vocab_text(vocab.tokens[m.left]) + " " + bytes_to_vocab_text(vocab.tokens[m.right]) + "\n";
  write_text_atomic(dir, "encoder.json", enc.dump() + "\n");
  write_text_atomic(dir, "vocab.bpe", merges);
}

}  // namespace zeropp
