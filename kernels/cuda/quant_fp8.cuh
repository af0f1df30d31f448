// CUDA twins of kernels/quant/quant_fp8.hpp's blockwise fp8 (e4m3) scheme, on device pointers.
//
// Bit for bit kernels/quant/quant_fp8_ref.hpp: the block's scale through the int
// kernels' device arithmetic (kernels/cuda/quant_device.cuh, Q = 448), the
// codes by __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3) (nearest even,
// saturating, as fp8::encode for every value the scheme feeds it: finite,
// |v| <= 448 up to rounding), the values by the exact e4m3 -> half -> fp32
// widening times the scale (__fmul_rn). A non-finite block stores the quiet
// NaN 0x7fc00000 as its scale, as on the host. One warp per block; shapes are
// checked (std::invalid_argument) before anything is launched, a failed launch
// throws std::runtime_error; asynchronous on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace zeropp::cuda {

void quantize_fp8(const float* x, uint8_t* q, float* scales, int64_t n, int64_t block,
                  cudaStream_t stream = nullptr);
// x = decode(q) * scale, rounded to the nearest bf16 when bf16 is set.
void dequantize_fp8(const uint8_t* q, const float* scales, float* x, int64_t n, int64_t block, bool bf16,
                    cudaStream_t stream = nullptr);

}  // namespace zeropp::cuda
