// Reading and writing byte-level BPE vocabularies.
//
// Two layouts are read, by the same checks:
//   GPT-2's:  encoder.json (token text -> id) and vocab.bpe (an optional
//             "#version" line, then one merge "LEFT RIGHT" per line, rank =
//             line order);
//   Hugging Face's tokenizer.json: model.type "BPE", model.vocab (token text
//             -> id), model.merges ("LEFT RIGHT" strings or [LEFT, RIGHT]
//             pairs), added_tokens (id, content) and a ByteLevel
//             pre_tokenizer with GPT-2's pattern (use_regex) and without
//             add_prefix_space.
// Token text is GPT-2's byte alphabet (byte_unicode.hpp); "<|endoftext|>" is
// required (prepare-data puts it between documents). Ids must be 0 .. N-1,
// each used once. `tokenizer train` writes GPT-2's layout.
#pragma once

#include <string>

#include "io/tokenizer/bpe.hpp"

namespace zeropp {

// A folder holding encoder.json + vocab.bpe (preferred) or tokenizer.json.
// Throws Error: one line naming the file (and line or key) that is wrong.
BpeVocab load_vocab_dir(const std::string& dir);
BpeVocab load_gpt2_vocab(const std::string& encoder_json, const std::string& vocab_bpe);
BpeVocab load_tokenizer_json(const std::string& path);

// Writes dir/encoder.json and dir/vocab.bpe, each atomically.
void write_gpt2_vocab(const std::string& dir, const BpeVocab& vocab);

}  // namespace zeropp
