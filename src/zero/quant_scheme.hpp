// One blockwise quantization format: what qwZ and both qgZ hops send.
//
// A QuantScheme is an element format (integers, or fp8 e4m3 for the weight
// gathers), a bit width (8 or 4; 8 for e4m3), a block (elements per scale) and
// a scale dtype (fp32). It owns the sizes (payload, scales, the packed
// [payload | scales] chunk of qwZ's gather) and dispatches the kernels of
// kernels/quant/quantize.hpp and kernels/quant/quant_reduce.hpp on raw buffers, so that
// callers never branch on the width. Sizes are pure functions; the payload
// size itself is quant_ref::payload_bytes, the one definition the kernels
// check against.
#pragma once

#include <cstdint>

namespace zeropp {

// The dtype of the per-block scales. Only fp32 exists: a bf16 scale would
// change the kernels' arithmetic (kernels/quant/quantize.hpp) and its references.
enum class ScaleDType { F32 };

// How an element is stored: a symmetric integer q * scale (kernels/quant/quantize.hpp),
// or an e4m3 float times the scale (kernels/quant/quant_fp8_ref.hpp: the error is
// relative per element, not absolute per block). E4M3 serves qwZ's gathers
// only: the qgZ operations below refuse it.
enum class QuantElement { Int, E4M3 };

struct QuantScheme {
  int bits = 4;         // 8 or 4 (8 for E4M3)
  int64_t block = 256;  // elements per scale; every n below is a multiple of it
  ScaleDType scale = ScaleDType::F32;
  QuantElement element = QuantElement::Int;

  // Bytes of the quantized values of n elements (n at 8 bits, n/2 at 4).
  int64_t payload_bytes(int64_t n) const;
  // Bytes of the n/block scales.
  int64_t scale_bytes(int64_t n) const;
  // payload + scales: what one destination's n elements cost on the wire
  // when payload and scales travel separately (qgZ's two all-to-alls).
  int64_t wire_bytes(int64_t n) const { return payload_bytes(n) + scale_bytes(n); }
  // One packed chunk [payload | pad | scales | pad] of n values (qwZ's
  // gather): the scales start, and consecutive chunks begin, at 16-byte
  // boundaries, so that every scale is aligned for any width and block
  // (misaligned loads are undefined behaviour, and fault on GPUs).
  static constexpr int64_t kPackAlign = 16;
  int64_t packed_scales_offset(int64_t n) const;
  int64_t packed_bytes(int64_t n) const;

  // q: payload_bytes(n) bytes, scales: n/block floats (kernels/quant/quantize.hpp).
  void quantize(const float* x, uint8_t* q, float* scales, int64_t n) const;
  void dequantize(const uint8_t* q, const float* scales, float* x, int64_t n) const;
  // Packed chunk variants (packed_bytes(n) bytes at `chunk`).
  void quantize_packed(const float* x, uint8_t* chunk, int64_t n) const;
  void dequantize_packed(const uint8_t* chunk, float* x, int64_t n) const;
  // dequantize_packed with every value rounded to its nearest bf16 in the same
  // pass: bit for bit dequantize_packed followed by round_to_bf16.
  void dequantize_packed_bf16(const uint8_t* chunk, float* x, int64_t n) const;
  // quantize of qgz_reorder(grad) without the reordered copy (kernels/quant/qgz_reorder.hpp):
  // n/(X·Y) must be a multiple of block.
  void quantize_reordered(const float* grad, uint8_t* q, float* scales, int64_t n, int X, int Y) const;
  // out[n] = sum over k chunks (chunk i: payload at q + i·payload_bytes(n),
  // scales at scales + i·n/block), in fp32, in chunk order (kernels/quant/quant_reduce.hpp).
  void dequantize_sum(const uint8_t* q, const float* scales, int k, float* out, int64_t n) const;
  // dequantize_sum, then requantized in `to` (same block) without leaving
  // the block: bit-identical to dequantize_sum followed by to.quantize.
  void dequant_sum_requant(const uint8_t* q, const float* scales, int k, const QuantScheme& to,
                           uint8_t* q_out, float* scales_out, int64_t n) const;
};

}  // namespace zeropp
