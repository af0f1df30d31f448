// Weights in and out (`zeropp ckpt import|export`): our HDF5 checkpoints to and
// from Hugging Face safetensors (GPT-2 family, shape from the config.json beside
// the file) and llm.c model files. Our checkpoints hold Hugging Face's names and
// shapes (docs/checkpoint-format.md), so safetensors maps one to one; llm.c
// stacks the layers and stores matrices [out, in], so its matrices are
// transposed. One process (the conversions use MPI_COMM_SELF).
//
// Vocabulary: a checkpoint holds `vocab_size` rows of wte. Import keeps the
// source's own vocabulary (safetensors: config.json's vocab_size; llm.c: V,
// dropping the Vp - V padding rows) unless vocab_size is given: then wte keeps
// that many rows, dropping the rest or adding zero rows (e.g. 50257 -> 50304).
// Export to llm.c pads wte with zero rows to Vp, a multiple of 128, and writes
// the checkpoint's vocabulary as V unless vocab_size (no larger) is given.
#pragma once

#include <string>

namespace zeropp {

enum class WeightsFormat { kSafetensors, kLlmc };

// From a path: ".safetensors" or a folder: safetensors; ".bin": llm.c; else Error.
WeightsFormat weights_format_of(const std::string& path);
// "safetensors" or "llmc"; else Error naming the value.
WeightsFormat parse_weights_format(const std::string& name);

struct ImportOptions {
  int vocab_size = 0;  // 0: the source's own
};
// Writes the HDF5 checkpoint `out` (which must not exist) from `source` (a
// safetensors file or a folder holding model.safetensors and config.json, or an
// llm.c model file). Everything is read and checked before `out` is created.
// Returns a one-line summary.
std::string import_weights(const std::string& source, WeightsFormat format, const std::string& out,
                           const ImportOptions& opt);

struct ExportOptions {
  int vocab_size = 0;  // llm.c: the header's V (0: the checkpoint's)
  bool bf16 = false;   // llm.c: version 5 (bfloat16, rounded to nearest even)
};
// Writes `out` (which must not exist; for safetensors also config.json beside
// it) from the weights of the HDF5 checkpoint `checkpoint`. Returns a summary.
std::string export_weights(const std::string& checkpoint, WeightsFormat format, const std::string& out,
                           const ExportOptions& opt);

}  // namespace zeropp
