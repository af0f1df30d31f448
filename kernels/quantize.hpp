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

namespace zeropp {

// Storage and range of a bit width: QuantFormat<8> and QuantFormat<4>.
template <int Bits>
struct QuantFormat;
template <>
struct QuantFormat<8> {
  using Storage = int8_t;
  static constexpr int kQmax = 127;
  static constexpr int64_t bytes(int64_t n) { return n; }
};
template <>
struct QuantFormat<4> {
  using Storage = uint8_t;
  static constexpr int kQmax = 7;
  static constexpr int64_t bytes(int64_t n) { return n / 2; }
};

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

// Per-block building blocks, shared with kernels/quant_reduce (not for the engine).
namespace quant {

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
KOKKOS_INLINE_FUNCTION uint32_t absmax_bits(const float* x, int64_t len) {
  int32_t m = 0;
  for (int64_t i = 0; i < len; ++i) {
    const int32_t a = int32_t(float_bits(x[i]) & 0x7fffffffu);
    m = a > m ? a : m;
  }
  return uint32_t(m);
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

// round-half-to-even(clamp(v, -Q, Q)) for |v| <= 2^22 in the default rounding
// mode, branch-free: adding and subtracting 1.5*2^23 rounds to an integer; the
// clamp is done on the integer (equivalent for an integer Q, and it keeps the
// loop free of float selects, which GCC does not if-convert without
// -ffast-math). In a finite block |v| <= Q (1 + a few ulps), so it rarely acts.
KOKKOS_INLINE_FUNCTION int32_t round_clamped(float v, int32_t qmax) {
  int32_t r = int32_t((v + kRoundMagic) - kRoundMagic);
  r = r < -qmax ? -qmax : r;
  return r > qmax ? qmax : r;
}

// One block of len elements (len even for 4 bits). inv = 0 (zero or non-finite block) gives q = 0.
template <int Bits>
KOKKOS_INLINE_FUNCTION void quantize_block(const float* x, typename QuantFormat<Bits>::Storage* q,
                                           int64_t len, const BlockParams& p) {
  constexpr int32_t Q = QuantFormat<Bits>::kQmax;
  const float pre = p.pre, inv = p.inv;
  if (inv == 0.0f) {  // zero or non-finite block (x * 0 would turn a NaN/Inf into a NaN q)
    for (int64_t i = 0; i < QuantFormat<Bits>::bytes(len); ++i) q[i] = 0;
    return;
  }
  if constexpr (Bits == 8) {
    for (int64_t i = 0; i < len; ++i) q[i] = int8_t(round_clamped((x[i] * pre) * inv, Q));
  } else {
    for (int64_t i = 0; i < len / 2; ++i) {
      const int32_t lo = round_clamped((x[2 * i] * pre) * inv, Q);
      const int32_t hi = round_clamped((x[2 * i + 1] * pre) * inv, Q);
      q[i] = uint8_t((lo & 0xf) | (hi << 4));
    }
  }
}

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
      const int32_t b = q[i];
      const float lo = float(int32_t(uint32_t(b) << 28) >> 28) * scale;
      const float hi = float(int32_t(uint32_t(b) << 24) >> 28) * scale;
      x[2 * i] = Add ? x[2 * i] + lo : lo;
      x[2 * i + 1] = Add ? x[2 * i + 1] + hi : hi;
    }
  }
}

}  // namespace quant
}  // namespace zeropp
