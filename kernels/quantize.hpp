// Blockwise symmetric quantization of fp32 to int8 (qwZ) and int4 (qgZ).
//
// x holds n floats split into n/block blocks of `block` consecutive elements;
// n must be a multiple of block (the engine pads each unit to a multiple of
// P*block, so every rank's slice is a whole number of blocks). Every kernel
// checks its arguments and throws std::invalid_argument otherwise. Block b
// covers x[b*block, (b+1)*block) and has one fp32 scale, scales[b].
//
// Per block, with Q = 127 (int8) or 7 (int4) and m = max |x_i| over the block:
//   m == 0           : scale = 0, every q = 0 (dequantizes to exact zeros).
//   m finite, > 0    : scale = m / Q (one ulp less if Q*scale would overflow,
//                              which only happens for m near FLT_MAX),
//                      pre   = 2^64 if m < 2^-64 else 1 (keeps inv finite for
//                              blocks of tiny or denormal values; exact),
//                      inv   = Q / (m * pre),
//                      q_i   = round-half-to-even(clamp((x_i * pre) * inv, -Q, Q)).
//                      This is x_i/scale up to a few ulps, with two multiplies
//                      instead of a division per element; the references do
//                      exactly this arithmetic, so kernel and reference agree
//                      bit for bit. Round trip: |x_i - q_i*scale| <= scale/2
//                      plus float rounding (a few ulps of scale, and 2^-149
//                      when scale is denormal). Blocks with m < 64*2^-149
//                      (int8; 4*2^-149 for int4) get scale = m/Q = 0 by
//                      underflow and come back as zeros (error < 1e-43).
//   m Inf or any NaN : scale = NaN and every q = 0, so the whole block
//                      dequantizes to NaN: a non-finite input is never turned
//                      into finite numbers (the sign of an Inf is not kept).
//   Dequantize: x_i = float(q_i) * scale (NaN for the whole block, as above).
//
// Layout of q:
//   int8: q is int8_t[n], q[i] is element i, in [-127, 127] (-128 never occurs).
//   int4: q is uint8_t[n/2]; byte i holds element 2i in its low nibble and
//         element 2i+1 in its high nibble, each a two's complement nibble in
//         [-7, 7] (0x8 never occurs). block must be even, so a block is a whole
//         number of bytes: block b's bytes are q[b*block/2, (b+1)*block/2).
//   Example: x = {1, -1, 7, -7} with block 4 gives scale 1 and bytes {0xF1, 0x97}.
//
// dequantize_*_add accumulates instead of overwriting: x_i += float(q_i)*scale
// (qgZ's receivers sum several dequantized chunks in fp32).
//
// The inner loops (absmax as an integer max over the float bit patterns with
// the sign cleared, which also detects Inf/NaN; scaling; rounding by adding
// and subtracting 1.5*2^23) are branch-free and vectorise. Parallelism is over
// blocks (Range over n/block).
#pragma once

#include <cstring>

#include "kernels/common.hpp"
#include "kernels/quant_ref.hpp"

namespace zeropp {

// Storage and range of a bit width: QuantFormat<8> and QuantFormat<4>
// (kernels/quant_ref.hpp holds the one definition, shared with CUDA).
template <int Bits>
using QuantFormat = quant_ref::Format<Bits>;

// Throws std::invalid_argument (naming `who`) unless block > 0, n >= 0,
// n % block == 0, block is even for 4 bits, and each view holds at least the
// given number of elements (x: n, q: bytes, scales: n/block).
void check_quant_args(const char* who, int bits, int64_t n, int64_t block, int64_t x_size, int64_t q_size,
                      int64_t scales_size);

void quantize_int8(CVec<float> x, Vec<int8_t> q, Vec<float> scales, int64_t n, int64_t block);
void dequantize_int8(CVec<int8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block);
void dequantize_int8_add(CVec<int8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block);

void quantize_int4(CVec<float> x, Vec<uint8_t> q, Vec<float> scales, int64_t n, int64_t block);
void dequantize_int4(CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block);
void dequantize_int4_add(CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block);

// Plain loops (std::fabs, std::isfinite, std::nearbyint) with the arithmetic above.
void quantize_int8_reference(CVec<float> x, Vec<int8_t> q, Vec<float> scales, int64_t n, int64_t block);
void dequantize_int8_reference(CVec<int8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block);
void dequantize_int8_add_reference(CVec<int8_t> q, CVec<float> scales, Vec<float> x, int64_t n,
                                   int64_t block);
void quantize_int4_reference(CVec<float> x, Vec<uint8_t> q, Vec<float> scales, int64_t n, int64_t block);
void dequantize_int4_reference(CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block);
void dequantize_int4_add_reference(CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n,
                                   int64_t block);

// Per-block building blocks, shared with kernels/quant_reduce (not for the engine;
// src/zero/quant_scheme.hpp is the engine's QuantScheme facade over the functions above).
namespace quant_detail {

KOKKOS_INLINE_FUNCTION uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
KOKKOS_INLINE_FUNCTION float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

// Largest |x_i| as bits with the sign cleared: for non-negative floats the
// integer order is the float order, +Inf is 0x7f800000 and every NaN above it.
// Eight independent running maxima (two SSE vectors) hide the latency of the
// compare-and-select chain.
KOKKOS_INLINE_FUNCTION uint32_t absmax_bits(const float* x, int64_t len) {
  constexpr int kLanes = 8;
  int32_t m[kLanes] = {0, 0, 0, 0, 0, 0, 0, 0};
  const int64_t main = len - len % kLanes;
  for (int64_t i = 0; i < main; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      const int32_t a = int32_t(float_bits(x[i + l]) & 0x7fffffffu);
      m[l] = a > m[l] ? a : m[l];
    }
  }
  for (int64_t i = main; i < len; ++i) {
    const int32_t a = int32_t(float_bits(x[i]) & 0x7fffffffu);
    m[0] = a > m[0] ? a : m[0];
  }
  int32_t r = 0;
  for (int l = 0; l < kLanes; ++l) r = m[l] > r ? m[l] : r;
  return uint32_t(r);
}

constexpr uint32_t kNonFiniteBits = 0x7f800000u;  // +Inf
constexpr uint32_t kQuietNaNBits = 0x7fc00000u;
constexpr uint32_t kTinyBits = 0x1f800000u;          // 2^-64
constexpr float kTinyPre = 18446744073709551616.0f;  // 2^64
constexpr float kRoundMagic = 12582912.0f;           // 1.5 * 2^23

struct BlockParams {
  float scale;  // stored scale: 0, m/Q, or NaN
  float pre;    // 1 or 2^64
  float inv;    // Q / (m * pre); 0 for zero and non-finite blocks (q = 0)
};

KOKKOS_INLINE_FUNCTION BlockParams block_params(uint32_t mbits, int qmax) {
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

// round-half-to-even(v) for |v| <= 2^22 in the default rounding mode, without
// a branch: adding and subtracting 1.5*2^23 rounds to an integer.
//
// No clamp to [-Q, Q] is needed: with |x| <= m, (x*pre)*inv is at most
// Q (1 + 2^-24)^2 < Q + 1/2 in magnitude, so it rounds to at most Q. The
// references clamp explicitly and the tests compare bit for bit.
KOKKOS_INLINE_FUNCTION int32_t round_even(float v) { return int32_t((v + kRoundMagic) - kRoundMagic); }

template <int Bits, bool Tiny>
KOKKOS_INLINE_FUNCTION void quantize_loop(const float* x, typename QuantFormat<Bits>::Storage* q, int64_t len,
                                          float pre, float inv) {
  // x*1 == x exactly, so the Tiny = false loop is the same arithmetic with one multiply less.
  auto v = [=](float xi) { return round_even((Tiny ? xi * pre : xi) * inv); };
  if constexpr (Bits == 8) {
    for (int64_t i = 0; i < len; ++i) q[i] = int8_t(v(x[i]));
  } else {
    // Nibbles are masked before the shift: shifting a negative value is undefined.
    for (int64_t i = 0; i < len / 2; ++i)
      q[i] = uint8_t((v(x[2 * i]) & 0xf) | ((v(x[2 * i + 1]) & 0xf) << 4));
  }
}

// One block of len elements (len even for 4 bits). inv = 0 (zero or non-finite block) gives q = 0.
template <int Bits>
KOKKOS_INLINE_FUNCTION void quantize_block(const float* x, typename QuantFormat<Bits>::Storage* q,
                                           int64_t len, const BlockParams& p) {
  if (p.inv == 0.0f) {  // zero or non-finite block (x * 0 would turn a NaN/Inf into a NaN q)
    for (int64_t i = 0; i < QuantFormat<Bits>::bytes(len); ++i) q[i] = 0;
  } else if (p.pre == 1.0f) {
    quantize_loop<Bits, false>(x, q, len, p.pre, p.inv);
  } else {
    quantize_loop<Bits, true>(x, q, len, p.pre, p.inv);
  }
}

// Element 2i and 2i+1 of an int4 byte, as floats.
KOKKOS_INLINE_FUNCTION float low_nibble(int32_t b) { return float(int32_t(uint32_t(b) << 28) >> 28); }
KOKKOS_INLINE_FUNCTION float high_nibble(int32_t b) { return float(int32_t(uint32_t(b) << 24) >> 28); }

// x = q*scale (Add: x += q*scale) over one block of len elements.
template <int Bits, bool Add>
KOKKOS_INLINE_FUNCTION void dequantize_block(const typename QuantFormat<Bits>::Storage* q, float scale,
                                             float* x, int64_t len) {
  if constexpr (Bits == 8) {
    for (int64_t i = 0; i < len; ++i) {
      const float d = float(q[i]) * scale;
      x[i] = Add ? x[i] + d : d;
    }
  } else {
    for (int64_t i = 0; i < len / 2; ++i) {
      const float lo = low_nibble(q[i]) * scale, hi = high_nibble(q[i]) * scale;
      x[2 * i] = Add ? x[2 * i] + lo : lo;
      x[2 * i + 1] = Add ? x[2 * i + 1] + hi : hi;
    }
  }
}

// Two chunks in one pass: x = (x + qa*sa) + qb*sb (Add), or qa*sa + qb*sb.
// The same fp32 operations in the same order as two dequantize_block calls.
template <int Bits, bool Add>
KOKKOS_INLINE_FUNCTION void dequantize2_block(const typename QuantFormat<Bits>::Storage* qa, float sa,
                                              const typename QuantFormat<Bits>::Storage* qb, float sb,
                                              float* x, int64_t len) {
  if constexpr (Bits == 8) {
    for (int64_t i = 0; i < len; ++i) {
      const float da = float(qa[i]) * sa;
      x[i] = (Add ? x[i] + da : da) + float(qb[i]) * sb;
    }
  } else {
    for (int64_t i = 0; i < len / 2; ++i) {
      const float lo = low_nibble(qa[i]) * sa, hi = high_nibble(qa[i]) * sa;
      x[2 * i] = (Add ? x[2 * i] + lo : lo) + low_nibble(qb[i]) * sb;
      x[2 * i + 1] = (Add ? x[2 * i + 1] + hi : hi) + high_nibble(qb[i]) * sb;
    }
  }
}

}  // namespace quant_detail
}  // namespace zeropp
