// prepare-data --tokenizer: UTF-8 text -> BPE tokens in llm.c-style shards.
//
// The inputs are read in chunks (text_chunks.hpp), so memory stays bounded
// (a few tens of MB plus the tokenizer) however large the text. Each input
// file is one document, and a literal "<|endoftext|>" in the text also ends
// one; "<|endoftext|>" (the token) is written between documents. The first
// val_tokens tokens go to val_000000.bin, val_000001.bin, ..., the rest to
// train_000000.bin, train_000001.bin, ..., each shard holding shard_tokens
// tokens but the last (llm.c's format, io/data/token_file.hpp). data.train =
// "OUT/train_*.bin" then reads them all (io/data/token_files.hpp).
// Shards are written into a temporary folder inside out_dir and moved in only
// when everything succeeded, replacing the val_*/train_* shards of an earlier
// run; on any error out_dir is left as it was.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zeropp {

constexpr int64_t kDefaultShardTokens = 100'000'000;  // llm.c's FineWeb shards
constexpr int64_t kDefaultValTokens = 1'000'000;

struct ShardStats {
  std::string out_dir;
  int64_t input_bytes = 0;
  int64_t val_tokens = 0, train_tokens = 0;
  int val_shards = 0, train_shards = 0;
  double seconds = 0;  // reading, tokenizing and writing

  // One line for the CLI, e.g. "prepare-data: 4137850 bytes -> out/val_*.bin
  // (1 shard, 1000000 tokens), out/train_*.bin (1 shard, 85000 tokens); 3.1 MB/s".
  std::string summary() const;
};

// Throws zeropp::Error (one line naming the file or value) for a bad
// tokenizer folder, a vocabulary over 65536 tokens, a missing or non-UTF-8
// input, shard_tokens or val_tokens below 2, fewer than 2 train tokens, or an
// out_dir that cannot be written.
ShardStats prepare_shards(const std::vector<std::string>& inputs, const std::string& out_dir,
                          const std::string& tokenizer_dir, int64_t shard_tokens = kDefaultShardTokens,
                          int64_t val_tokens = kDefaultValTokens);

}  // namespace zeropp
