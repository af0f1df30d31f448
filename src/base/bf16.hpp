// bfloat16 <-> fp32: the upper 16 bits of an IEEE float, rounded to nearest even.
//
// Used on the wire (reduce-scatter partial sums, bf16 weights). NaNs stay NaN
// (made quiet, sign kept) instead of rounding to infinity; finite values that
// round past the largest bf16 become infinity, as IEEE rounding requires.
#pragma once

#include <cstdint>
#include <cstring>

namespace zeropp {

inline uint16_t fp32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

inline float bf16_to_fp32(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline void fp32_to_bf16(const float* in, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = fp32_to_bf16(in[i]);
}

inline void bf16_to_fp32(const uint16_t* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_fp32(in[i]);
}

// x[i] <- the fp32 value of its nearest bf16 (what a bf16 round trip gives).
inline void round_to_bf16(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = bf16_to_fp32(fp32_to_bf16(x[i]));
}

}  // namespace zeropp
