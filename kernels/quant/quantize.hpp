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
// dequantize_*_bf16 rounds each dequantized value to the nearest bf16 in the
// same pass (src/base/bf16.hpp's rounding; qwZ's gather on a bf16 wire): bit
// for bit dequantize_* followed by round_to_bf16.
//
// The inner loops (absmax as an integer max over the float bit patterns with
// the sign cleared, which also detects Inf/NaN; scaling; rounding by adding
// 1.5*2^23) are branch-free, vectorise, and are compiled for SSE4, AVX2 and
// AVX-512, chosen at load time (kernels/quant/quant_isa.hpp). Parallelism is over
// blocks (Range over n/block).
#pragma once

#include "kernels/quant/quant_ref.hpp"
#include "kernels/runtime/common.hpp"

namespace zeropp {

// Storage and range of a bit width: QuantFormat<8> and QuantFormat<4>
// (kernels/quant/quant_ref.hpp holds the one definition, shared with CUDA).
template <int Bits>
using QuantFormat = quant_ref::Format<Bits>;

// a for 8 bits, b for 4: one of two functions whose argument types differ by
// the bit width (the entry points' CUDA twins).
template <int Bits, class A, class B>
constexpr auto by_bits(A a, B b) {
  if constexpr (Bits == 8)
    return a;
  else
    return b;
}

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

void dequantize_int8_bf16(CVec<int8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block);
void dequantize_int4_bf16(CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block);

// Plain loops (std::fabs, std::isfinite, std::nearbyint) with the arithmetic above.
void quantize_int8_reference(CVec<float> x, Vec<int8_t> q, Vec<float> scales, int64_t n, int64_t block);
void dequantize_int8_reference(CVec<int8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block);
void dequantize_int8_add_reference(CVec<int8_t> q, CVec<float> scales, Vec<float> x, int64_t n,
                                   int64_t block);
void quantize_int4_reference(CVec<float> x, Vec<uint8_t> q, Vec<float> scales, int64_t n, int64_t block);
void dequantize_int4_reference(CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block);
void dequantize_int4_add_reference(CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n,
                                   int64_t block);
void dequantize_int8_bf16_reference(CVec<int8_t> q, CVec<float> scales, Vec<float> x, int64_t n,
                                    int64_t block);
void dequantize_int4_bf16_reference(CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n,
                                    int64_t block);

}  // namespace zeropp
