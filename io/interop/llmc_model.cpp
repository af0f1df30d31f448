#include "io/interop/llmc_model.hpp"

#include <filesystem>
#include <fstream>

#include "io/files/atomic_file.hpp"
#include "src/base/bf16.hpp"
#include "src/base/errors.hpp"

namespace zeropp {

namespace {

constexpr int kHeaderInts = 256;
constexpr int32_t kMaxDim = int32_t(1) << 24;  // beyond any GPT-2
// More values than any file holds; products are checked against it before they can overflow.
constexpr int64_t kMaxElements = int64_t(1) << 50;

// The elements of a shape, or -1 beyond kMaxElements.
int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d != 0 && n > kMaxElements / d) return -1;
    n *= d;
  }
  return n;
}

// The elements of all arrays, or -1 beyond kMaxElements.
int64_t total_elements(const LlmcHeader& h) {
  int64_t n = 0;
  for (const LlmcArray& a : llmc_array_shapes(h)) {
    const int64_t k = numel_of(a.shape);
    if (k < 0 || n > kMaxElements - k) return -1;
    n += k;
  }
  return n;
}

}  // namespace

std::vector<LlmcArray> llmc_array_shapes(const LlmcHeader& h) {
  const int64_t Vp = h.padded_vocab_size, T = h.max_seq_len, L = h.n_layer, C = h.n_embd;
  return {{"wte", {Vp, C}},           {"wpe", {T, C}},      {"ln1w", {L, C}},        {"ln1b", {L, C}},
          {"qkvw", {L, 3 * C, C}},    {"qkvb", {L, 3 * C}}, {"attprojw", {L, C, C}}, {"attprojb", {L, C}},
          {"ln2w", {L, C}},           {"ln2b", {L, C}},     {"fcw", {L, 4 * C, C}},  {"fcb", {L, 4 * C}},
          {"fcprojw", {L, C, 4 * C}}, {"fcprojb", {L, C}},  {"lnfw", {C}},           {"lnfb", {C}}};
}

void check_llmc_header(const LlmcHeader& h, const std::string& where) {
  if (h.version != kLlmcVersionF32 && h.version != kLlmcVersionBF16)
    throw Error(where + ": version " + std::to_string(h.version) + ", expected " +
                std::to_string(kLlmcVersionF32) + " (float32) or " + std::to_string(kLlmcVersionBF16) +
                " (bfloat16)");
  const std::pair<const char*, int32_t> dims[] = {{"maxT", h.max_seq_len}, {"V", h.vocab_size},
                                                  {"L", h.n_layer},        {"NH", h.n_head},
                                                  {"C", h.n_embd},         {"Vp", h.padded_vocab_size}};
  for (const auto& [name, v] : dims)
    if (v <= 0 || v > kMaxDim)
      throw Error(where + ": header " + name + " = " + std::to_string(v) + " is not in [1, " +
                  std::to_string(kMaxDim) + "]");
  if (h.padded_vocab_size < h.vocab_size)
    throw Error(where + ": header Vp = " + std::to_string(h.padded_vocab_size) +
                " is below V = " + std::to_string(h.vocab_size));
  if (h.n_embd % h.n_head != 0)
    throw Error(where + ": header C = " + std::to_string(h.n_embd) +
                " is not a multiple of NH = " + std::to_string(h.n_head));
  if (total_elements(h) < 0)
    throw Error(where + ": the header's shapes hold more than 2^50 values (L = " + std::to_string(h.n_layer) +
                ", C = " + std::to_string(h.n_embd) + ")");
}

LlmcModel read_llmc_model(const std::string& path) {
  const std::string where = "llm.c model file " + path;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw Error(where + ": no such file");
  const uint64_t size = std::filesystem::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  int32_t hdr[kHeaderInts];
  if (ec || size < sizeof hdr || !in.read(reinterpret_cast<char*>(hdr), sizeof hdr))
    throw Error(where + ": shorter than the " + std::to_string(sizeof hdr) + "-byte header");
  if (hdr[0] != kLlmcMagic)
    throw Error(where + ": magic " + std::to_string(hdr[0]) + ", expected " + std::to_string(kLlmcMagic) +
                " (not an llm.c model file)");
  LlmcModel m;
  LlmcHeader& h = m.header;
  h.version = hdr[1];
  h.max_seq_len = hdr[2];
  h.vocab_size = hdr[3];
  h.n_layer = hdr[4];
  h.n_head = hdr[5];
  h.n_embd = hdr[6];
  h.padded_vocab_size = hdr[7];
  check_llmc_header(h, where);
  const bool bf16 = h.version == kLlmcVersionBF16;
  const uint64_t expect = sizeof hdr + uint64_t(total_elements(h)) * (bf16 ? 2 : 4);
  if (size != expect)
    throw Error(where + ": " + std::to_string(size) + " bytes; the header's shapes need " +
                std::to_string(expect));
  for (const LlmcArray& a : llmc_array_shapes(h)) {
    std::vector<float> v(size_t(numel_of(a.shape)));
    bool ok;
    if (bf16) {
      std::vector<uint16_t> raw(v.size());
      ok = bool(in.read(reinterpret_cast<char*>(raw.data()), std::streamsize(raw.size() * 2)));
      bf16_to_fp32(raw.data(), v.data(), int64_t(v.size()));
    } else {
      ok = bool(in.read(reinterpret_cast<char*>(v.data()), std::streamsize(v.size() * 4)));
    }
    if (!ok) throw Error(where + ": cannot read array " + a.name);
    m.arrays.push_back(std::move(v));
  }
  return m;
}

void write_llmc_model(const std::string& path, const LlmcModel& m) {
  const LlmcHeader& h = m.header;
  check_llmc_header(h, "llm.c model file " + path);
  int32_t hdr[kHeaderInts] = {};
  hdr[0] = kLlmcMagic;
  hdr[1] = h.version;
  hdr[2] = h.max_seq_len;
  hdr[3] = h.vocab_size;
  hdr[4] = h.n_layer;
  hdr[5] = h.n_head;
  hdr[6] = h.n_embd;
  hdr[7] = h.padded_vocab_size;
  AtomicFile out(path);
  out.write(hdr, sizeof hdr);
  for (const std::vector<float>& a : m.arrays) {
    if (h.version == kLlmcVersionBF16) {
      std::vector<uint16_t> raw(a.size());
      fp32_to_bf16(a.data(), raw.data(), int64_t(a.size()));
      out.write(raw.data(), raw.size() * 2);
    } else {
      out.write(a.data(), a.size() * 4);
    }
  }
  out.commit();
}

}  // namespace zeropp
