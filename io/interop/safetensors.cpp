#include "io/interop/safetensors.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "io/files/atomic_file.hpp"
#include "src/base/bf16.hpp"
#include "src/base/errors.hpp"

namespace zeropp {

namespace {

using json = nlohmann::json;

// Headers larger than this are refused (GPT-2 XL's is ~30 KB).
constexpr uint64_t kMaxHeaderBytes = uint64_t(100) << 20;
// Dimensions larger than this are refused before any product can overflow.
constexpr int64_t kMaxDim = int64_t(1) << 40;

// Bytes per element of the dtypes the format defines.
int dtype_bytes(const std::string& d) {
  static const std::map<std::string, int> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"F64", 8},     {"I64", 8}, {"U64", 8}};
  const auto it = sizes.find(d);
  return it == sizes.end() ? 0 : it->second;
}

uint64_t read_u64_le(const unsigned char* b) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
  return v;
}

// A JSON array of non-negative integers (each below `max`), or an Error.
std::vector<uint64_t> uint_array(const json& v, uint64_t max, const std::string& what) {
  if (!v.is_array()) throw Error(what + " is not an array");
  std::vector<uint64_t> out;
  for (const json& x : v) {
    if (!x.is_number_unsigned() || x.get<uint64_t>() > max)
      throw Error(what + " holds " + x.dump() + ", not an integer in [0, " + std::to_string(max) + "]");
    out.push_back(x.get<uint64_t>());
  }
  return out;
}

}  // namespace

const SafetensorsEntry* SafetensorsHeader::find(const std::string& name) const {
  for (const SafetensorsEntry& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

namespace {

// Duplicate keys would silently replace each other: refused while parsing.
json parse_without_duplicates(const std::string& text, const std::string& where) {
  std::vector<std::set<std::string>> keys_at_depth;
  std::string duplicate;
  const json::parser_callback_t no_duplicates = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      if (keys_at_depth.size() <= size_t(depth) + 1) keys_at_depth.resize(size_t(depth) + 2);
      keys_at_depth[size_t(depth) + 1].clear();
    } else if (event == json::parse_event_t::key && duplicate.empty()) {
      if (keys_at_depth.size() <= size_t(depth)) keys_at_depth.resize(size_t(depth) + 1);
      if (!keys_at_depth[size_t(depth)].insert(parsed.get<std::string>()).second)
        duplicate = parsed.get<std::string>();
    }
    return true;
  };
  json j;
  try {
    j = json::parse(text, no_duplicates);
  } catch (const json::exception& e) {
    throw Error(where + ": header is not valid JSON (" + e.what() + ")");
  }
  if (!duplicate.empty()) throw Error(where + ": header: key '" + duplicate + "' appears twice");
  if (!j.is_object()) throw Error(where + ": header is not a JSON object");
  return j;
}

// One tensor's entry, checked against its dtype, shape and the data section.
SafetensorsEntry parse_entry(const std::string& name, const json& v, uint64_t data_bytes,
                             const std::string& where) {
  const std::string what = where + ": tensor '" + name + "'";
  if (!v.is_object()) throw Error(what + " is not an object");
  for (const auto& [k, unused] : v.items())
    if (k != "dtype" && k != "shape" && k != "data_offsets") throw Error(what + ": unknown key '" + k + "'");
  if (!v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
    throw Error(what + ": needs dtype, shape and data_offsets");
  SafetensorsEntry e;
  e.name = name;
  if (!v["dtype"].is_string()) throw Error(what + ": dtype is not a string");
  e.dtype = v["dtype"].get<std::string>();
  const int esize = dtype_bytes(e.dtype);
  if (esize == 0) throw Error(what + ": unknown dtype '" + e.dtype + "'");
  uint64_t numel = 1;
  for (uint64_t d : uint_array(v["shape"], uint64_t(kMaxDim), what + ": shape")) {
    e.shape.push_back(int64_t(d));
    numel = d == 0 ? 0 : numel > uint64_t(kMaxDim) / d ? uint64_t(kMaxDim) + 1 : numel * d;
  }
  if (numel > uint64_t(kMaxDim)) throw Error(what + ": shape has too many elements");
  const auto off = uint_array(v["data_offsets"], data_bytes, what + ": data_offsets");
  if (off.size() != 2 || off[0] > off[1])
    throw Error(what + ": data_offsets must be [begin, end] with begin <= end within the " +
                std::to_string(data_bytes) + " data bytes");
  e.begin = off[0];
  e.end = off[1];
  if (e.end - e.begin != numel * uint64_t(esize))
    throw Error(what + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                ") hold " + std::to_string(e.end - e.begin) + " bytes; " + e.dtype + " of this shape needs " +
                std::to_string(numel * uint64_t(esize)));
  return e;
}

// The tensors must tile the data section: no overlap, no hole, nothing after. Sorts them by offset.
void check_tiling(std::vector<SafetensorsEntry>& tensors, uint64_t data_bytes, const std::string& where) {
  std::sort(tensors.begin(), tensors.end(), [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t pos = 0;
  for (const SafetensorsEntry& e : tensors) {
    if (e.begin != pos)
      throw Error(where + ": tensor '" + e.name + "' starts at data byte " + std::to_string(e.begin) +
                  ", expected " + std::to_string(pos) + " (tensors overlap or leave a hole)");
    pos = e.end;
  }
  if (pos != data_bytes)
    throw Error(where + ": the tensors end at data byte " + std::to_string(pos) + " but the file holds " +
                std::to_string(data_bytes));
}

}  // namespace

SafetensorsHeader parse_safetensors_header(const std::string& text, uint64_t data_bytes,
                                           const std::string& where) {
  const json j = parse_without_duplicates(text, where);
  SafetensorsHeader h;
  for (const auto& [name, v] : j.items()) {
    if (name != "__metadata__") {
      h.tensors.push_back(parse_entry(name, v, data_bytes, where));
      continue;
    }
    if (!v.is_object()) throw Error(where + ": __metadata__ is not an object");
    for (const auto& [k, s] : v.items()) {
      if (!s.is_string()) throw Error(where + ": __metadata__ '" + k + "' is not a string");
      h.metadata[k] = s.get<std::string>();
    }
  }
  check_tiling(h.tensors, data_bytes, where);
  return h;
}

SafetensorsHeader read_safetensors_header(const std::string& path) {
  const std::string where = "safetensors file " + path;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw Error(where + ": no such file");
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(where + ": cannot read its size: " + ec.message());
  std::ifstream in(path, std::ios::binary);
  unsigned char len[8];
  if (size < 8 || !in.read(reinterpret_cast<char*>(len), 8))
    throw Error(where + ": shorter than the 8-byte header length");
  const uint64_t n = read_u64_le(len);
  if (n > size - 8 || n > kMaxHeaderBytes)
    throw Error(where + ": header length " + std::to_string(n) + " exceeds the file (" +
                std::to_string(size) + " bytes) or the " + std::to_string(kMaxHeaderBytes) + "-byte limit");
  std::string text(size_t(n), '\0');
  if (!in.read(text.data(), std::streamsize(n))) throw Error(where + ": cannot read the header");
  SafetensorsHeader h = parse_safetensors_header(text, size - 8 - n, where);
  h.data_start = 8 + n;
  return h;
}

std::vector<float> read_safetensors_tensor(const std::string& path, const SafetensorsHeader& header,
                                           const SafetensorsEntry& t) {
  const std::string what = "safetensors file " + path + ": tensor '" + t.name + "'";
  if (t.dtype != "F32" && t.dtype != "BF16")
    throw Error(what + ": dtype " + t.dtype + " is not supported (F32 or BF16)");
  const uint64_t bytes = t.end - t.begin;
  std::string raw(size_t(bytes), '\0');
  std::ifstream in(path, std::ios::binary);
  if (!in.seekg(std::streamoff(header.data_start + t.begin)) || !in.read(raw.data(), std::streamsize(bytes)))
    throw Error(what + ": cannot read its " + std::to_string(bytes) + " bytes");
  std::vector<float> out;
  if (t.dtype == "F32") {
    out.resize(size_t(bytes / 4));
    std::memcpy(out.data(), raw.data(), size_t(bytes));
  } else {
    std::vector<uint16_t> h(size_t(bytes / 2));
    std::memcpy(h.data(), raw.data(), size_t(bytes));
    out.resize(h.size());
    bf16_to_fp32(h.data(), out.data(), int64_t(h.size()));
  }
  return out;
}

void write_safetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  json j = json::object();
  if (!metadata.empty()) j["__metadata__"] = metadata;
  uint64_t pos = 0;
  for (const SafetensorsTensor& t : tensors) {
    uint64_t numel = 1;
    for (int64_t d : t.shape) numel *= uint64_t(d);
    j[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {pos, pos + 4 * numel}}};
    pos += 4 * numel;
  }
  std::string text = j.dump();
  text.resize((text.size() + 7) / 8 * 8, ' ');  // the data section starts 8-byte aligned
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(uint64_t(text.size()) >> (8 * i));
  AtomicFile out(path);
  out.write(len, 8);
  out.write(text.data(), text.size());
  for (const SafetensorsTensor& t : tensors) {
    uint64_t numel = 1;
    for (int64_t d : t.shape) numel *= uint64_t(d);
    out.write(t.data, size_t(numel) * 4);
  }
  out.commit();
}

}  // namespace zeropp
