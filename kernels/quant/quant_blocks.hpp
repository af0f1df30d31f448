// The per-block loops of the quantization kernels, for kernels/quant_isa_*.cpp.
//
// Each including file defines ZEROPP_QUANT_ISA (sse4, avx2, avx512) and is
// compiled for that instruction set; it gets quant_kernels_<ISA>() (declared
// in kernels/quant/quant_isa.hpp). Every function here lives in namespace
// quant_<ISA>, so the copies of different ISAs never merge at link time (an
// inline function shared between the files could otherwise run AVX-512 code on
// a CPU without it). For the same reason this header includes no other
// project header, and quantize.hpp's arithmetic is restated here, not called.
//
// Arithmetic (kernels/quant/quantize.hpp, bit for bit with kernels/quant/quant_ref.hpp):
// absmax as an integer max over the float bits with the sign cleared (Inf and
// NaN sort above every finite value); per element two multiplies at most, no
// division; rounding by adding 1.5*2^23, whose float bits then hold the
// rounded integer in their low bits (|v| <= Q + 1/2 < 2^22), so that a byte or
// a nibble is taken from the bits without a float-to-int conversion. Loops
// are branch-free over contiguous memory so that the compiler vectorises them
// at the width of the ISA.
#pragma once

#ifndef ZEROPP_QUANT_ISA
#error "define ZEROPP_QUANT_ISA (sse4, avx2 or avx512) before including kernels/quant/quant_blocks.hpp"
#endif
#define ZEROPP_QUANT_CAT2(a, b) a##b
#define ZEROPP_QUANT_CAT(a, b) ZEROPP_QUANT_CAT2(a, b)
#define ZEROPP_QUANT_STR2(a) #a
#define ZEROPP_QUANT_STR(a) ZEROPP_QUANT_STR2(a)
#define ZEROPP_QUANT_ISA_NS ZEROPP_QUANT_CAT(quant_, ZEROPP_QUANT_ISA)

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/quant/quant_isa.hpp"

namespace zeropp {
namespace ZEROPP_QUANT_ISA_NS {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

constexpr uint32_t kNonFiniteBits = 0x7f800000u;  // +Inf
constexpr uint32_t kQuietNaNBits = 0x7fc00000u;
constexpr uint32_t kTinyBits = 0x1f800000u;          // 2^-64
constexpr float kTinyPre = 18446744073709551616.0f;  // 2^64
constexpr float kRoundMagic = 12582912.0f;           // 1.5 * 2^23
constexpr int64_t kTile = 256;                       // elements per int4 packing pass (1 KiB of L1)

// Largest |x_i| as bits with the sign cleared.
inline uint32_t absmax_bits(const float* x, int64_t len) {
  uint32_t m = 0;
  for (int64_t i = 0; i < len; ++i) {
    const uint32_t a = float_bits(x[i]) & 0x7fffffffu;
    m = a > m ? a : m;
  }
  return m;
}

struct BlockParams {
  float scale;  // stored scale: 0, m/Q, or NaN
  float pre;    // 1 or 2^64
  float inv;    // Q / (m * pre); 0 for zero and non-finite blocks (q = 0)
};

inline BlockParams block_params(uint32_t mbits, int qmax) {
  const float Q = float(qmax);
  if (mbits == 0) return {0.0f, 1.0f, 0.0f};
  if (mbits >= kNonFiniteBits) return {bits_float(kQuietNaNBits), 1.0f, 0.0f};
  const float m = bits_float(mbits);
  const float pre = mbits < kTinyBits ? kTinyPre : 1.0f;
  float scale = m / Q;
  // m near FLT_MAX: m/Q may round up so far that Q*scale overflows; one ulp less cannot.
  if (float_bits(scale * Q) >= kNonFiniteBits) scale = bits_float(float_bits(scale) - 1);
  return {scale, pre, Q / (m * pre)};
}

// The bits of round-half-even(v) + 1.5*2^23: the integer is their low bits
// (two's complement). No clamp: with |x| <= m, |(x*pre)*inv| <= Q(1 + 2^-24)^2 < Q + 1/2.
template <bool Tiny>
inline uint32_t rounded_bits(float x, float pre, float inv) {
  return float_bits((Tiny ? x * pre : x) * inv + kRoundMagic);
}

template <bool Tiny>
inline void quantize8_loop(const float* x, int8_t* q, int64_t len, float pre, float inv) {
  for (int64_t i = 0; i < len; ++i) q[i] = int8_t(uint8_t(rounded_bits<Tiny>(x[i], pre, inv)));
}

// Two passes per tile: the rounded bits (contiguous, vectorises), then each
// pair as one 64-bit word: element 2i's nibble low, 2i+1's (bit 32) moved to bit 4.
template <bool Tiny>
inline void quantize4_loop(const float* x, uint8_t* q, int64_t len, float pre, float inv) {
  alignas(64) uint32_t t[kTile];
  for (int64_t i0 = 0; i0 < len; i0 += kTile) {
    const int64_t m = len - i0 < kTile ? len - i0 : kTile;
    for (int64_t i = 0; i < m; ++i) t[i] = rounded_bits<Tiny>(x[i0 + i], pre, inv);
    for (int64_t i = 0; i < m / 2; ++i) {
      uint64_t w;
      std::memcpy(&w, t + 2 * i, sizeof w);
      q[i0 / 2 + i] = uint8_t((w & 0xfu) | ((w >> 28) & 0xf0u));
    }
  }
}

template <int Bits>
inline void quantize_block(const float* x, void* qv, float* scale, int64_t len) {
  const BlockParams p = block_params(absmax_bits(x, len), Bits == 8 ? 127 : 7);
  *scale = p.scale;
  if (p.inv == 0.0f) {  // zero or non-finite block (x * 0 would turn a NaN/Inf into a NaN q)
    std::memset(qv, 0, size_t(Bits == 8 ? len : len / 2));
  } else if constexpr (Bits == 8) {
    auto* q = static_cast<int8_t*>(qv);
    // x*1 == x exactly: the common case skips a multiply.
    p.pre == 1.0f ? quantize8_loop<false>(x, q, len, p.pre, p.inv)
                  : quantize8_loop<true>(x, q, len, p.pre, p.inv);
  } else {
    auto* q = static_cast<uint8_t*>(qv);
    p.pre == 1.0f ? quantize4_loop<false>(x, q, len, p.pre, p.inv)
                  : quantize4_loop<true>(x, q, len, p.pre, p.inv);
  }
}

// nb consecutive blocks: one call per group of blocks, not per block (blocks are small).
template <int Bits, class S>
inline void quantize_blocks(const float* x, S* q, float* scales, int64_t nb, int64_t block) {
  for (int64_t b = 0; b < nb; ++b)
    quantize_block<Bits>(x + b * block, q + b * block * Bits / 8, scales + b, block);
}

// src/base/bf16.hpp's round trip (nearest even; a NaN made quiet, sign kept).
inline float round_bf16(float d) {
  const uint32_t u = float_bits(d);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  const uint32_t quiet_nan = (u | 0x00400000u) & 0xffff0000u;
  return bits_float((u & 0x7fffffffu) > kNonFiniteBits ? quiet_nan : rounded);
}

template <int Mode>
inline float store(float old, float d) {
  if constexpr (Mode == int(DequantMode::Add)) return old + d;
  if constexpr (Mode == int(DequantMode::RoundBF16)) return round_bf16(d);
  return d;
}

// Element 2i and 2i+1 of an int4 byte, as floats.
inline float low_nibble(uint8_t b) { return float(int32_t(uint32_t(b) << 28) >> 28); }
inline float high_nibble(uint8_t b) { return float(int32_t(uint32_t(b) << 24) >> 28); }

template <int Bits>
using Storage = std::conditional_t<Bits == 8, int8_t, uint8_t>;

template <int Bits, int Mode>
inline void dequantize_block(const Storage<Bits>* q, float scale, float* x, int64_t len) {
  if constexpr (Bits == 8) {
    for (int64_t i = 0; i < len; ++i) x[i] = store<Mode>(x[i], float(q[i]) * scale);
  } else {
    for (int64_t i = 0; i < len / 2; ++i) {
      x[2 * i] = store<Mode>(x[2 * i], low_nibble(q[i]) * scale);
      x[2 * i + 1] = store<Mode>(x[2 * i + 1], high_nibble(q[i]) * scale);
    }
  }
}

template <int Bits, int Mode>
inline void dequantize_blocks(const Storage<Bits>* q, const float* scales, float* x, int64_t nb,
                              int64_t block) {
  for (int64_t b = 0; b < nb; ++b)
    dequantize_block<Bits, Mode>(q + b * block * Bits / 8, scales[b], x + b * block, block);
}

// Two chunks in one pass: s = (s + qa*sa) + qb*sb (Add), or qa*sa + qb*sb:
// the same fp32 operations in the same order as two dequantize passes.
template <int Bits, bool Add>
inline void dequantize2_block(const Storage<Bits>* qa, float sa, const Storage<Bits>* qb, float sb, float* s,
                              int64_t len) {
  if constexpr (Bits == 8) {
    for (int64_t i = 0; i < len; ++i) {
      const float da = float(qa[i]) * sa;
      s[i] = (Add ? s[i] + da : da) + float(qb[i]) * sb;
    }
  } else {
    for (int64_t i = 0; i < len / 2; ++i) {
      const float lo = low_nibble(qa[i]) * sa, hi = high_nibble(qa[i]) * sa;
      s[2 * i] = (Add ? s[2 * i] + lo : lo) + low_nibble(qb[i]) * sb;
      s[2 * i + 1] = (Add ? s[2 * i + 1] + hi : hi) + high_nibble(qb[i]) * sb;
    }
  }
}

// ((deq_0 + deq_1) + deq_2) + ...: two chunks per pass over s.
template <int Bits>
inline void sum_block(const Storage<Bits>* q, int64_t chunk_bytes, const float* scales, int64_t stride, int k,
                      float* s, int64_t len) {
  constexpr int kSet = int(DequantMode::Set), kAdd = int(DequantMode::Add);
  auto qj = [&](int j) { return q + j * chunk_bytes; };
  auto sj = [&](int j) { return scales[j * stride]; };
  int j = 0;
  if (k >= 2) {
    dequantize2_block<Bits, false>(qj(0), sj(0), qj(1), sj(1), s, len);
    j = 2;
  } else {
    dequantize_block<Bits, kSet>(qj(0), sj(0), s, len);
    j = 1;
  }
  for (; j + 1 < k; j += 2) dequantize2_block<Bits, true>(qj(j), sj(j), qj(j + 1), sj(j + 1), s, len);
  if (j < k) dequantize_block<Bits, kAdd>(qj(j), sj(j), s, len);
}

inline QuantIsaKernels make_table(const char* name) {
  QuantIsaKernels k{};
  k.name = name;
  k.quantize8 = quantize_blocks<8, int8_t>;
  k.quantize4 = quantize_blocks<4, uint8_t>;
  k.dequantize8[0] = dequantize_blocks<8, 0>;
  k.dequantize8[1] = dequantize_blocks<8, 1>;
  k.dequantize8[2] = dequantize_blocks<8, 2>;
  k.dequantize4[0] = dequantize_blocks<4, 0>;
  k.dequantize4[1] = dequantize_blocks<4, 1>;
  k.dequantize4[2] = dequantize_blocks<4, 2>;
  k.sum8 = sum_block<8>;
  k.sum4 = sum_block<4>;
  return k;
}

}  // namespace ZEROPP_QUANT_ISA_NS

const QuantIsaKernels& ZEROPP_QUANT_CAT(quant_kernels_, ZEROPP_QUANT_ISA)() {
  static const QuantIsaKernels k = ZEROPP_QUANT_ISA_NS::make_table(ZEROPP_QUANT_STR(ZEROPP_QUANT_ISA));
  return k;
}

}  // namespace zeropp
