// The quantization kernels by bit width, on raw byte buffers: what the
// engine and qgZ call, so that 8 and 4 bits take one code path above here.
#pragma once

#include <cstdint>

#include "kernels/quant_reduce.hpp"
#include "kernels/quantize.hpp"

namespace zeropp::quant {

// Payload bytes of n values at `bits` (8 or 4).
inline int64_t payload_bytes(int64_t n, int bits) { return bits == 8 ? n : n / 2; }

// One packed chunk [payload | pad | scales | pad] of n values (qwZ's gather):
// the fp32 scales start, and consecutive chunks begin, at 16-byte boundaries,
// so that every scale is an aligned float (misaligned loads are undefined
// behaviour, and fault on GPUs) for any width and block.
constexpr int64_t kPackAlign = 16;
inline int64_t round_up(int64_t bytes, int64_t to) { return (bytes + to - 1) / to * to; }
inline int64_t packed_scales_offset(int64_t n, int bits) {
  return round_up(payload_bytes(n, bits), kPackAlign);
}
inline int64_t packed_bytes(int64_t n, int bits, int64_t block) {
  return round_up(packed_scales_offset(n, bits) + 4 * (n / block), kPackAlign);
}

inline void quantize(int bits, const float* x, uint8_t* q, float* scales, int64_t n, int64_t block) {
  if (bits == 8)
    quantize_int8(CVec<float>(x, n), Vec<int8_t>(reinterpret_cast<int8_t*>(q), n),
                  Vec<float>(scales, n / block), n, block);
  else
    quantize_int4(CVec<float>(x, n), Vec<uint8_t>(q, n / 2), Vec<float>(scales, n / block), n, block);
}

inline void dequantize(int bits, const uint8_t* q, const float* scales, float* x, int64_t n, int64_t block) {
  if (bits == 8)
    dequantize_int8(CVec<int8_t>(reinterpret_cast<const int8_t*>(q), n), CVec<float>(scales, n / block),
                    Vec<float>(x, n), n, block);
  else
    dequantize_int4(CVec<uint8_t>(q, n / 2), CVec<float>(scales, n / block), Vec<float>(x, n), n, block);
}

// out[n] = sum over k chunks (chunk i: payload at q + i·payload_bytes(n),
// scales at scales + i·n/block), in fp32, in chunk order.
inline void dequant_sum(int bits, const uint8_t* q, const float* scales, int k, float* out, int64_t n,
                        int64_t block) {
  const int64_t nb = payload_bytes(n, bits) * k, ns = n / block * k;
  if (bits == 8)
    dequant_sum_int8(CVec<int8_t>(reinterpret_cast<const int8_t*>(q), nb), CVec<float>(scales, ns), k,
                     Vec<float>(out, n), n, block);
  else
    dequant_sum_int4(CVec<uint8_t>(q, nb), CVec<float>(scales, ns), k, Vec<float>(out, n), n, block);
}

// dequant_sum, then requantized to int4 without leaving the block (fused).
inline void dequant_sum_requant4(int bits_in, const uint8_t* q, const float* scales, int k, uint8_t* q_out,
                                 float* scales_out, int64_t n, int64_t block) {
  const int64_t nb = payload_bytes(n, bits_in) * k, ns = n / block * k;
  if (bits_in == 8)
    dequant_sum_requant_int8_to_int4(CVec<int8_t>(reinterpret_cast<const int8_t*>(q), nb),
                                     CVec<float>(scales, ns), k, Vec<uint8_t>(q_out, n / 2),
                                     Vec<float>(scales_out, n / block), n, block);
  else
    dequant_sum_requant_int4(CVec<uint8_t>(q, nb), CVec<float>(scales, ns), k, Vec<uint8_t>(q_out, n / 2),
                             Vec<float>(scales_out, n / block), n, block);
}

}  // namespace zeropp::quant
