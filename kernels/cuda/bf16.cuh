// fp32 <-> bf16 bits on the device: src/base/bf16.hpp's conversions, bit for
// bit (round to nearest even; a NaN stays a quiet NaN with its sign; finite
// values past the largest bf16 become infinity; denormals round like any
// other value, as integer arithmetic on the bits does not flush them).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace zeropp::cuda::detail {

__device__ __forceinline__ uint16_t fp32_to_bf16_bits(float f) {
  uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

__device__ __forceinline__ float bf16_bits_to_fp32(uint16_t h) { return __uint_as_float(uint32_t(h) << 16); }

}  // namespace zeropp::cuda::detail
