// Hugging Face safetensors files, read and written by our own code (the
// format is small; no C++ library for it is packaged in Debian):
//   8 bytes     N, the header's length (uint64, little-endian)
//   N bytes     JSON: {"<tensor>": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]}, ...,
//               "__metadata__": {"<key>": "<string>", ...}}  (optional), padded with spaces
//   the rest    the tensors' bytes, row-major, little-endian; [b, e) counts from here
// Reading is strict: any problem with the header (length, JSON, a key, a dtype,
// a shape, offsets that overlap, leave holes or run past the file) is one Error
// naming the file and the tensor.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace zeropp {

struct SafetensorsEntry {
  std::string name;
  std::string dtype;  // "F32", "BF16", "F16", "F64", "I64", ... (as the file says)
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte range within the data section
};

struct SafetensorsHeader {
  std::vector<SafetensorsEntry> tensors;  // by byte offset
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;                                      // 8 + N
  const SafetensorsEntry* find(const std::string& name) const;  // nullptr when absent
};

// Checks a header's JSON text against a data section of `data_bytes` bytes;
// `where` names the file in errors.
SafetensorsHeader parse_safetensors_header(const std::string& json, uint64_t data_bytes,
                                           const std::string& where);

// Reads and checks the header of the file at `path`.
SafetensorsHeader read_safetensors_header(const std::string& path);

// One tensor's values as float32: F32 as stored, BF16 widened (exact). Other
// dtypes are an Error naming the tensor.
std::vector<float> read_safetensors_tensor(const std::string& path, const SafetensorsHeader& header,
                                           const SafetensorsEntry& tensor);

struct SafetensorsTensor {
  std::string name;
  std::vector<int64_t> shape;
  const float* data;  // numel floats, row-major
};

// Writes F32 tensors in the given order to `path` through a temporary file and
// a rename (io/files/atomic_file.hpp).
void write_safetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors,
                       const std::map<std::string, std::string>& metadata);

}  // namespace zeropp
