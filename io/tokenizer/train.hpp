// `zeropp tokenizer train`: a byte-level BPE vocabulary from a text corpus.
//
// The corpus files are pre-tokenised as for encoding (a literal
// "<|endoftext|>" only separates), the distinct pieces counted, then merges
// are learned greedily: each round merges, in every piece, the adjacent pair
// seen most often (ties: the smaller (left id, right id)), until the
// vocabulary holds vocab_size tokens or no pair is left. Ids: 0 .. 255 the
// single bytes in GPT-2's order (byte_unicode.hpp), then one per merge, then
// "<|endoftext|>". Each round recounts all pairs of the distinct pieces:
// meant for test and small corpora (minutes for a few MB), not web scale.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "io/tokenizer/bpe.hpp"

namespace zeropp {

// Throws Error for vocab_size outside 257 .. 65536 (shards store uint16 ids)
// and for unreadable or non-UTF-8 corpus files (naming the file).
BpeVocab train_bpe(const std::vector<std::string>& corpus_files, std::size_t vocab_size);

}  // namespace zeropp
