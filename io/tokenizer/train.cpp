// Greedy BPE training; see train.hpp.
#include "io/tokenizer/train.hpp"

#include <map>
#include <unordered_map>

#include "io/data/text_chunks.hpp"
#include "io/tokenizer/byte_unicode.hpp"
#include "src/base/errors.hpp"

namespace zeropp {

namespace {

using Counts = std::unordered_map<std::string, int64_t>;

void count_pieces(std::string_view text, Counts& counts) {
  split_text(
      text, [&](std::string_view piece) { ++counts[std::string(piece)]; }, [] {});
}

}  // namespace

BpeVocab train_bpe(const std::vector<std::string>& corpus_files, std::size_t vocab_size) {
  if (vocab_size < 257 || vocab_size > 65536)
    throw Error("--vocab-size " + std::to_string(vocab_size) +
                ": must lie in 257 .. 65536 (256 bytes + <|endoftext|>; shards store 16-bit ids)");
  Counts counts;
  for (const std::string& path : corpus_files) {
    TextChunks chunks(path);
    std::string_view chunk;
    while (chunks.next(chunk)) count_pieces(chunk, counts);
  }

  BpeVocab v;
  uint32_t byte_id[256];
  for (unsigned b : byte_order()) {
    byte_id[b] = uint32_t(v.tokens.size());
    v.tokens.emplace_back(1, char(b));
  }
  std::unordered_map<std::string, uint32_t> id_of;
  for (uint32_t id = 0; id < v.tokens.size(); ++id) id_of.emplace(v.tokens[id], id);
  std::vector<std::vector<uint32_t>> words;
  std::vector<int64_t> weight;
  for (const auto& [piece, n] : counts) {
    words.emplace_back();
    for (char c : piece) words.back().push_back(byte_id[static_cast<unsigned char>(c)]);
    weight.push_back(n);
  }

  while (v.tokens.size() + 1 < vocab_size) {
    // Ordered map: the first of the most frequent pairs is the smallest key.
    std::map<uint64_t, int64_t> pairs;
    for (std::size_t w = 0; w < words.size(); ++w)
      for (std::size_t i = 0; i + 1 < words[w].size(); ++i)
        pairs[uint64_t(words[w][i]) << 32 | words[w][i + 1]] += weight[w];
    if (pairs.empty()) break;
    auto best = pairs.begin();
    for (auto it = pairs.begin(); it != pairs.end(); ++it)
      if (it->second > best->second) best = it;
    const auto left = uint32_t(best->first >> 32), right = uint32_t(best->first);
    // Two merges may spell the same bytes ("ab"+"c", "a"+"bc"): one token.
    const auto [it, added] = id_of.emplace(v.tokens[left] + v.tokens[right], uint32_t(v.tokens.size()));
    const uint32_t result = it->second;
    if (added) v.tokens.push_back(it->first);
    v.merges.push_back({left, right, result});
    for (auto& word : words) {
      std::size_t out = 0;
      for (std::size_t i = 0; i < word.size(); ++i) {
        if (i + 1 < word.size() && word[i] == left && word[i + 1] == right) {
          word[out++] = result;
          ++i;
        } else {
          word[out++] = word[i];
        }
      }
      word.resize(out);
    }
  }
  v.end_of_text = uint32_t(v.tokens.size());
  v.tokens.emplace_back(kEndOfText);
  return v;
}

}  // namespace zeropp
