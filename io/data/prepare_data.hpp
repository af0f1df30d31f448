// Corpus preparation: UTF-8 text -> byte-level train/validation token files.
//
// Tokens are the text's bytes (vocabulary 256, token = byte value), so no
// tokenizer is needed and generated tokens decode by writing the bytes back.
// The last val_fraction of the tokens (floor(N·val_fraction)) go to
// out_dir/val.bin and the rest to out_dir/train.bin, both in llm.c's format
// (io/data/token_file.hpp). Everything is checked before anything is written, and
// each file is replaced atomically, so bad input leaves existing files alone.
#pragma once

#include <cstdint>
#include <string>

namespace zeropp {

constexpr double kDefaultValFraction = 0.05;
constexpr int kByteVocabSize = 256;

struct PrepareStats {
  std::string input_path;
  std::string train_path;
  std::string val_path;
  int64_t input_bytes = 0;
  int64_t train_tokens = 0;
  int64_t val_tokens = 0;

  // One line for the CLI, e.g. "prepare-data: data/kjv/kjv.txt (4137850 bytes)
  // -> data/kjv/train.bin (3930958 tokens), data/kjv/val.bin (206892 tokens)".
  std::string summary() const;
};

// Throws zeropp::Error (one line naming the file or value) when the input is
// missing, unreadable, empty or not valid UTF-8, when val_fraction is not in
// (0, 1), when either split would have fewer than 2 tokens (one input/target
// pair), or when out_dir cannot be created or written. Creates out_dir.
PrepareStats prepare_data(const std::string& input_path, const std::string& out_dir,
                          double val_fraction = kDefaultValFraction);

}  // namespace zeropp
