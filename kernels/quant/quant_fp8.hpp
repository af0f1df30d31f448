// The blockwise fp8 (e4m3) scheme of qwZ's weight gathers, on Kokkos views.
//
// Format, scale arithmetic and NaN/Inf policy: kernels/quant/quant_fp8_ref.hpp.
// Shapes as the int8 kernels (kernels/quant/quantize.hpp): n a multiple of block,
// q one byte per element, scales n/block floats; checked, std::invalid_argument
// otherwise. Parallel over blocks; under a device context the CUDA twins
// (kernels/cuda/quant_fp8.cuh) run instead, bit for bit the same.
#pragma once

#include "kernels/runtime/common.hpp"

namespace zeropp {

void quantize_fp8(CVec<float> x, Vec<uint8_t> q, Vec<float> scales, int64_t n, int64_t block);
void dequantize_fp8(CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block);
// dequantize_fp8 with each value rounded to its nearest bf16 in the same pass.
void dequantize_fp8_bf16(CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block);

}  // namespace zeropp
