// The quantization kernels' per-block loops, compiled once per instruction
// set and chosen once, at load time, from the CPU's features.
//
// kernels/quant/quant_blocks.hpp holds the loops (the arithmetic of
// kernels/quant/quantize.hpp, bit for bit); kernels/quant/quant_isa_{sse4,avx2,avx512}.cpp
// compile them with -march=x86-64-v2, -v3 and -v4 (and, as all of
// zeropp_kernels, -ffp-contract=off: an FMA would change the sums' rounding). kernels/quant/quantize.cpp,
// quant_reduce.cpp and qgz_reorder.cpp call them through quant_kernels().
//
// The choice follows simd_isa() (kernels/runtime/cpu_features.hpp), so
// ZEROPP_MAX_CPU_ISA=avx2|baseline caps it like the elementwise kernels'
// (baseline here is SSE4): the tests run every path this way.
#pragma once

#include <cstdint>

#include "kernels/runtime/cpu_features.hpp"

namespace zeropp {

// Function pointers over raw pointers. quantize and dequantize: nb
// consecutive blocks of `block` elements (even for 4 bits), scales[b] for
// block b. Dequantize modes (DequantMode): 0 x = q*s, 1 x += q*s,
// 2 x = bf16-rounded q*s (src/base/bf16.hpp's rounding).
struct QuantIsaKernels {
  const char* name;  // "avx512", "avx2" or "sse4"
  void (*quantize8)(const float* x, int8_t* q, float* scales, int64_t nb, int64_t block);
  void (*quantize4)(const float* x, uint8_t* q, float* scales, int64_t nb, int64_t block);
  void (*dequantize8[3])(const int8_t* q, const float* scales, float* x, int64_t nb, int64_t block);
  void (*dequantize4[3])(const uint8_t* q, const float* scales, float* x, int64_t nb, int64_t block);
  // s = deq_0 + ... + deq_{k-1} over one block, left to right in fp32; chunk
  // j's block at q + j*chunk_bytes, its scale at scales[j*scale_stride].
  void (*sum8)(const int8_t* q, int64_t chunk_bytes, const float* scales, int64_t scale_stride, int k,
               float* s, int64_t len);
  void (*sum4)(const uint8_t* q, int64_t chunk_bytes, const float* scales, int64_t scale_stride, int k,
               float* s, int64_t len);
};

enum class DequantMode { Set = 0, Add = 1, RoundBF16 = 2 };

// Blocks per call of the kernels' parallel loops (one call per block costs a
// third of quantize_int4's time at the engine's 128-element blocks).
constexpr int64_t kQuantBlocksPerCall = 64;

// The table for simd_isa(), chosen on first use.
const QuantIsaKernels& quant_kernels();
// The widest table this CPU runs within `isa`.
const QuantIsaKernels& quant_kernels_for(SimdIsa isa);

// One table per instruction set (kernels/quant_isa_*.cpp); call only where the CPU has it.
const QuantIsaKernels& quant_kernels_sse4();
const QuantIsaKernels& quant_kernels_avx2();
const QuantIsaKernels& quant_kernels_avx512();

}  // namespace zeropp
