#include "io/checkpoint/checkpoint_checksum.hpp"

#include <cstdio>
#include <cstring>

#include "io/checkpoint/checkpoint.hpp"

namespace zeropp {

uint64_t checksum_element(uint64_t flat_index, uint64_t bits) {
  uint64_t x = (flat_index * 0x9E3779B97F4A7C15ULL) ^ bits;
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return x;
}

uint64_t checksum_part(const float* data, int64_t first, int64_t n) {
  uint64_t s0 = 0, s1 = 0;
  int64_t i = 0;
  for (; i + 1 < n; i += 2) {
    uint32_t b0, b1;
    std::memcpy(&b0, data + i, 4);
    std::memcpy(&b1, data + i + 1, 4);
    s0 += checksum_element(uint64_t(first + i), b0);
    s1 += checksum_element(uint64_t(first + i + 1), b1);
  }
  if (i < n) {
    uint32_t b;
    std::memcpy(&b, data + i, 4);
    s0 += checksum_element(uint64_t(first + i), b);
  }
  return s0 + s1;
}

namespace ckpt {

std::string hex64(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace ckpt
}  // namespace zeropp
