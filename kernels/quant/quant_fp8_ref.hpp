// fp8 e4m3 ("e4m3fn", OCP/NVIDIA) and the blockwise fp8 scheme of qwZ's gathers.
//
// Pure C++17 like kernels/quant/quant_ref.hpp (tools and the CUDA kernel tests
// include it): the one definition of the format and of the scheme's
// arithmetic, which kernels/quant/quant_fp8.cpp runs over blocks in parallel and
// kernels/cuda/quant_fp8.cu repeats bit for bit.
//
// e4m3: sign, 4 exponent bits (bias 7), 3 mantissa bits. Exponent field 0 is
// subnormal (m * 2^-9); S.1111.111 is the only NaN; no infinities; the
// largest finite value is S.1111.110 = 448.
//
// encode(x): round to nearest, ties to even; |x| >= 448 (and +-Inf) saturates
// to +-448 (CUDA's __NV_SATFINITE); NaN -> S.1111.111; +-0 keep their sign.
//
// The scheme, per block of `block` floats with m = max |x_i| (the int8
// scheme's arithmetic of kernels/quant/quantize.hpp with Q = 448):
//   m == 0           : scale = 0, every code 0.
//   m finite, > 0    : scale = m / 448, code_i = encode((x_i * pre) * inv),
//                      pre and inv as in quant_ref::block_params_q. Rounding
//                      can only reach 448: |v_i| <= 448 up to two ulps, and
//                      what lies past it saturates.
//   m Inf or any NaN : scale = NaN, every code 0: the block decodes to NaN.
//   Dequantize: x_i = decode(code_i) * scale.
// Error per element: half an e4m3 step of v_i, times scale: |x - x'| <=
// 2^-4 |x| where |v_i| >= 2^-6 (normal), <= 2^-10 scale below (subnormal),
// plus fp32 rounding of the scale and the products.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/quant/quant_ref.hpp"

namespace zeropp::fp8 {

constexpr float kMax = 448.0f;
constexpr uint8_t kMaxCode = 0x7e;  // 448
constexpr uint8_t kNaNCode = 0x7f;  // with the sign bit: the only NaNs

// C++20's std::bit_cast.
template <class To, class From>
inline To bit_cast(const From& f) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast: sizes differ");
  To t;
  std::memcpy(&t, &f, sizeof t);
  return t;
}

inline uint8_t encode(float x) {
  const uint32_t u = bit_cast<uint32_t>(x), a = u & 0x7fffffffu;
  const auto sign = uint8_t((u >> 24) & 0x80u);
  if (a > 0x7f800000u) return uint8_t(sign | kNaNCode);
  if (a >= 0x43e00000u) return uint8_t(sign | kMaxCode);  // |x| >= 448
  if (a < 0x3c800000u) {
    // Below 2^-6, the subnormal grid of step 2^-9: a * 2^9 is exact, and adding
    // 1.5 * 2^23 rounds it to an integer (nearest even) in the low bits, 0..8;
    // 8 is code 0x08, the smallest normal 2^-6.
    return uint8_t(sign | (bit_cast<uint32_t>(bit_cast<float>(a) * 512.0f + 12582912.0f) & 0xfu));
  }
  // Normal: drop 20 mantissa bits, nearest even (a carry moves into the
  // exponent, as it should), and rebias the exponent from 127 to 7.
  const uint32_t r = a + 0x7ffffu + ((a >> 20) & 1u);
  return uint8_t(sign | ((r >> 20) - (120u << 3)));
}

inline float decode(uint8_t c) {
  const uint32_t sign = uint32_t(c & 0x80u) << 24, em = c & 0x7fu;
  if (em == kNaNCode) return bit_cast<float>(sign | 0x7fc00000u);
  if (em < 8) return bit_cast<float>(sign | bit_cast<uint32_t>(float(em) * 0x1p-9f));  // subnormal, or zero
  return bit_cast<float>(sign | ((em + (120u << 3)) << 20));
}

// One block: its scale and codes.
inline void quantize_block(const float* x, uint8_t* q, float* scale, int64_t len) {
  const quant_ref::Params p = quant_ref::block_params_q(x, len, kMax);
  *scale = p.scale;
  for (int64_t i = 0; i < len; ++i) q[i] = p.inv == 0 ? uint8_t(0) : encode((x[i] * p.pre) * p.inv);
}

inline void dequantize_block(const uint8_t* q, float scale, float* x, int64_t len) {
  for (int64_t i = 0; i < len; ++i) x[i] = decode(q[i]) * scale;
}

// q (n bytes) and scales (n/block) from x (n), block by block.
inline void quantize(const float* x, uint8_t* q, float* scales, int64_t n, int64_t block) {
  quant_ref::check_shape("fp8::quantize", 8, n, block);
  for (int64_t b = 0; b < n / block; ++b) quantize_block(x + b * block, q + b * block, scales + b, block);
}

// x = decode(q) * scale; Bf16: then each x_i rounded to its nearest bf16.
template <bool Bf16>
inline void dequantize(const uint8_t* q, const float* scales, float* x, int64_t n, int64_t block) {
  quant_ref::check_shape("fp8::dequantize", 8, n, block);
  for (int64_t b = 0; b < n / block; ++b) dequantize_block(q + b * block, scales[b], x + b * block, block);
  if constexpr (Bf16) round_to_bf16(x, n);
}

}  // namespace zeropp::fp8
