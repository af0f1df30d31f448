// Byte-level BPE with GPT-2's rules: encode text to token ids and back.
//
// A text is cut at each literal "<|endoftext|>" (which becomes the end-of-text
// token), the rest into pre-tokenisation pieces (pretokenize.hpp), and each
// piece, as bytes, starts as one token per byte. Then, as in GPT-2's bpe():
// while some adjacent pair is a merge, take the pair of lowest rank (its
// line order in vocab.bpe) and merge all its occurrences, left to right.
// Decoding concatenates the tokens' bytes, so decode(encode(t)) == t for every
// valid UTF-8 text t.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "io/tokenizer/pretokenize.hpp"

namespace zeropp {

// What the vocabulary files hold, checked (tokenizer_files.hpp): tokens[id] is
// the token's bytes, every single byte is a token, merges are in rank order
// and each one's result is the token of the two parts' bytes concatenated.
struct BpeVocab {
  struct Merge {
    uint32_t left, right, result;
  };
  std::vector<std::string> tokens;
  std::vector<Merge> merges;
  uint32_t end_of_text = 0;
};

class BpeTokenizer {
 public:
  explicit BpeTokenizer(BpeVocab vocab);

  // Appends the ids of `text` (valid UTF-8) to `out`.
  void encode(std::string_view text, std::vector<uint32_t>& out) const;
  std::vector<uint32_t> encode(std::string_view text) const;
  // The bytes of the tokens; throws Error for an id outside the vocabulary.
  std::string decode(const std::vector<uint32_t>& ids) const;

  std::size_t vocab_size() const { return vocab_.tokens.size(); }
  uint32_t end_of_text() const { return vocab_.end_of_text; }
  const BpeVocab& vocab() const { return vocab_; }

 private:
  void encode_piece(std::string_view piece, std::vector<uint32_t>& out) const;

  BpeVocab vocab_;
  uint32_t byte_token_[256];
  struct Rank {
    uint32_t rank, result;
  };
  std::unordered_map<uint64_t, Rank> ranks_;  // (left << 32 | right) -> merge
  // Pieces repeat (words): their encodings are kept, up to kCacheLimit of them.
  static constexpr std::size_t kCacheLimit = 1 << 16;  // ~10 MB: bounded memory on any text
  mutable std::unordered_map<std::string, std::vector<uint32_t>> cache_;
};

}  // namespace zeropp
