// BPE encoding and decoding; the rules are in bpe.hpp.
#include "io/tokenizer/bpe.hpp"

#include <limits>

#include "src/base/errors.hpp"

namespace zeropp {

namespace {

uint64_t pair_key(uint32_t a, uint32_t b) { return uint64_t(a) << 32 | b; }

}  // namespace

BpeTokenizer::BpeTokenizer(BpeVocab vocab) : vocab_(std::move(vocab)) {
  std::unordered_map<std::string, uint32_t> id_of;
  for (uint32_t id = 0; id < vocab_.tokens.size(); ++id) id_of.emplace(vocab_.tokens[id], id);
  for (unsigned b = 0; b < 256; ++b) byte_token_[b] = id_of.at(std::string(1, char(b)));
  ranks_.reserve(vocab_.merges.size());
  for (uint32_t r = 0; r < vocab_.merges.size(); ++r) {
    const auto& m = vocab_.merges[r];
    ranks_.emplace(pair_key(m.left, m.right), Rank{r, m.result});
  }
}

void BpeTokenizer::encode_piece(std::string_view piece, std::vector<uint32_t>& out) const {
  const std::string key(piece);
  if (const auto hit = cache_.find(key); hit != cache_.end()) {
    out.insert(out.end(), hit->second.begin(), hit->second.end());
    return;
  }
  std::vector<uint32_t> word, next;
  word.reserve(piece.size());
  for (char c : piece) word.push_back(byte_token_[static_cast<unsigned char>(c)]);
  while (word.size() > 1) {
    Rank best{std::numeric_limits<uint32_t>::max(), 0};
    uint32_t left = 0, right = 0;
    for (std::size_t i = 0; i + 1 < word.size(); ++i) {
      const auto it = ranks_.find(pair_key(word[i], word[i + 1]));
      if (it != ranks_.end() && it->second.rank < best.rank) {
        best = it->second;
        left = word[i];
        right = word[i + 1];
      }
    }
    if (best.rank == std::numeric_limits<uint32_t>::max()) break;
    next.clear();
    for (std::size_t i = 0; i < word.size(); ++i) {
      if (i + 1 < word.size() && word[i] == left && word[i + 1] == right) {
        next.push_back(best.result);
        ++i;
      } else {
        next.push_back(word[i]);
      }
    }
    word.swap(next);
  }
  out.insert(out.end(), word.begin(), word.end());
  if (cache_.size() >= kCacheLimit) cache_.clear();
  cache_.emplace(key, std::move(word));
}

void BpeTokenizer::encode(std::string_view text, std::vector<uint32_t>& out) const {
  split_text(
      text, [&](std::string_view piece) { encode_piece(piece, out); },
      [&] { out.push_back(vocab_.end_of_text); });
}

std::vector<uint32_t> BpeTokenizer::encode(std::string_view text) const {
  std::vector<uint32_t> out;
  encode(text, out);
  return out;
}

std::string BpeTokenizer::decode(const std::vector<uint32_t>& ids) const {
  std::string out;
  for (uint32_t id : ids) {
    if (id >= vocab_.tokens.size())
      throw Error("token id " + std::to_string(id) + " is outside the vocabulary (size " +
                  std::to_string(vocab_.tokens.size()) + ")");
    out += vocab_.tokens[id];
  }
  return out;
}

}  // namespace zeropp
