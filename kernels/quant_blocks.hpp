// The per-block loops of the quantization kernels, for kernels/quant_isa_*.cpp.
//
// Each including file defines ZEROPP_QUANT_ISA_NS (sse4, avx2, avx512) and is
// compiled for that instruction set: every function here lives in that
// namespace, so the copies of different ISAs never merge at link time (an
// inline function shared between the files could otherwise run AVX-512 code on
// a CPU without it). For the same reason this header includes no other
// project header, and quantize.hpp's arithmetic is restated here, not called.
//
// Arithmetic (kernels/quantize.hpp, bit for bit with kernels/quant_ref.hpp):
// absmax as an integer max over the float bits with the sign cleared (Inf and
// NaN sort above every finite value); per element two multiplies at most, no
// division; rounding by adding 1.5*2^23, whose float bits then hold the
// rounded integer in their low bits (|v| <= Q + 1/2 < 2^22), so that a byte or
// a nibble is taken from the bits without a float-to-int conversion. Loops
// are branch-free over contiguous memory so that the compiler vectorises them
// at the width of the ISA.
#pragma once

#ifndef ZEROPP_QUANT_ISA_NS
#error "define ZEROPP_QUANT_ISA_NS before including kernels/quant_blocks.hpp"
#endif

#include <cstdint>
#include <cstring>

#include "kernels/quant_isa.hpp"

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

template <int Mode>
inline void dequantize8_block(const int8_t* q, float scale, float* x, int64_t len) {
  for (int64_t i = 0; i < len; ++i) x[i] = store<Mode>(x[i], float(q[i]) * scale);
}

template <int Mode>
inline void dequantize4_block(const uint8_t* q, float scale, float* x, int64_t len) {
  for (int64_t i = 0; i < len / 2; ++i) {
    x[2 * i] = store<Mode>(x[2 * i], low_nibble(q[i]) * scale);
    x[2 * i + 1] = store<Mode>(x[2 * i + 1], high_nibble(q[i]) * scale);
  }
}

// Two chunks in one pass: s = (s + qa*sa) + qb*sb (Add), or qa*sa + qb*sb:
// the same fp32 operations in the same order as two dequantize passes.
template <bool Add>
inline void dequantize2_8(const int8_t* qa, float sa, const int8_t* qb, float sb, float* s, int64_t len) {
  for (int64_t i = 0; i < len; ++i) {
    const float da = float(qa[i]) * sa;
    s[i] = (Add ? s[i] + da : da) + float(qb[i]) * sb;
  }
}
template <bool Add>
inline void dequantize2_4(const uint8_t* qa, float sa, const uint8_t* qb, float sb, float* s, int64_t len) {
  for (int64_t i = 0; i < len / 2; ++i) {
    const float lo = low_nibble(qa[i]) * sa, hi = high_nibble(qa[i]) * sa;
    s[2 * i] = (Add ? s[2 * i] + lo : lo) + low_nibble(qb[i]) * sb;
    s[2 * i + 1] = (Add ? s[2 * i + 1] + hi : hi) + high_nibble(qb[i]) * sb;
  }
}

// ((deq_0 + deq_1) + deq_2) + ...: two chunks per pass over s.
template <class S, class One, class Two>
inline void sum_block(const S* q, int64_t chunk_bytes, const float* scales, int64_t stride, int k, float* s,
                      int64_t len, One one, Two two) {
  auto qj = [&](int j) { return q + j * chunk_bytes; };
  auto sj = [&](int j) { return scales[j * stride]; };
  int j = 0;
  if (k >= 2) {
    two(qj(0), sj(0), qj(1), sj(1), s, len, false);
    j = 2;
  } else {
    one(qj(0), sj(0), s, len, false);
    j = 1;
  }
  for (; j + 1 < k; j += 2) two(qj(j), sj(j), qj(j + 1), sj(j + 1), s, len, true);
  if (j < k) one(qj(j), sj(j), s, len, true);
}

inline void sum8(const int8_t* q, int64_t cb, const float* sc, int64_t stride, int k, float* s, int64_t len) {
  sum_block(
      q, cb, sc, stride, k, s, len,
      [](const int8_t* a, float sa, float* o, int64_t n, bool add) {
        add ? dequantize8_block<int(DequantMode::Add)>(a, sa, o, n)
            : dequantize8_block<int(DequantMode::Set)>(a, sa, o, n);
      },
      [](const int8_t* a, float sa, const int8_t* b, float sb, float* o, int64_t n, bool add) {
        add ? dequantize2_8<true>(a, sa, b, sb, o, n) : dequantize2_8<false>(a, sa, b, sb, o, n);
      });
}

inline void sum4(const uint8_t* q, int64_t cb, const float* sc, int64_t stride, int k, float* s,
                 int64_t len) {
  sum_block(
      q, cb, sc, stride, k, s, len,
      [](const uint8_t* a, float sa, float* o, int64_t n, bool add) {
        add ? dequantize4_block<int(DequantMode::Add)>(a, sa, o, n)
            : dequantize4_block<int(DequantMode::Set)>(a, sa, o, n);
      },
      [](const uint8_t* a, float sa, const uint8_t* b, float sb, float* o, int64_t n, bool add) {
        add ? dequantize2_4<true>(a, sa, b, sb, o, n) : dequantize2_4<false>(a, sa, b, sb, o, n);
      });
}

inline QuantIsaKernels make_table(const char* name) {
  QuantIsaKernels k{};
  k.name = name;
  k.quantize8 = [](const float* x, int8_t* q, float* s, int64_t len) { quantize_block<8>(x, q, s, len); };
  k.quantize4 = [](const float* x, uint8_t* q, float* s, int64_t len) { quantize_block<4>(x, q, s, len); };
  k.dequantize8[0] = dequantize8_block<0>;
  k.dequantize8[1] = dequantize8_block<1>;
  k.dequantize8[2] = dequantize8_block<2>;
  k.dequantize4[0] = dequantize4_block<0>;
  k.dequantize4[1] = dequantize4_block<1>;
  k.dequantize4[2] = dequantize4_block<2>;
  k.sum8 = sum8;
  k.sum4 = sum4;
  return k;
}

}  // namespace ZEROPP_QUANT_ISA_NS
}  // namespace zeropp
