// CUDA kernels of ZeRO++'s quantization (qwZ, qgZ), on device pointers.
//
// Same formats, scale arithmetic and NaN/Inf policy as kernels/quant/quantize.hpp,
// same summation order as kernels/quant/quant_reduce.hpp; the host references they
// are checked against are kernels/quant/quant_ref.hpp (tools/gpu_check).
//
// Agreement with the host reference:
//   * quantized bytes and scales: bit for bit (the arithmetic is spelled with
//     IEEE round-to-nearest intrinsics, __fdiv_rn/__fmul_rn/__fadd_rn and
//     __float2int_rn, so nvcc can neither contract a multiply and an add into
//     an FMA nor use an approximate division; denormals are kept, as on the
//     host). A non-finite block stores the quiet NaN 0x7fc00000 as on the host.
//   * dequantized floats and fp32 sums: bit for bit for finite results. A NaN
//     result is NaN on both sides, but its payload may differ (the GPU returns
//     its canonical NaN 0x7fffffff for 0 * NaN, x86 propagates 0x7fc00000), so
//     NaNs compare as "both NaN".
//
// Shapes: n a multiple of block, block even where int4 is involved, k >= 1;
// violations throw std::invalid_argument before anything is launched. n = 0
// launches nothing. Every function is asynchronous on `stream` and throws
// std::runtime_error if the launch fails (cudaGetLastError).
//
// Paths: one warp per quantization block with warp-level absmax
// (__reduce_max_sync over the float bit patterns with the sign cleared, which
// also catches Inf/NaN). When block is a multiple of 128 up to 1024 and the
// pointers are 16-byte (floats) / 4-byte (int8) / 2-byte (int4) aligned, each
// lane keeps its block/32 values in registers (float4 loads, packed stores);
// any other shape takes a generic path (scalar loads, two passes over the block
// in L1) with the same arithmetic. Dequantize and dequant-sum are elementwise
// (4 elements per thread on the vector path).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace zeropp::cuda {

// Blockwise symmetric quantization: q (n or n/2 bytes), scales (n/block).
void quantize_int8(const float* x, int8_t* q, float* scales, int64_t n, int64_t block,
                   cudaStream_t stream = nullptr);
void quantize_int4(const float* x, uint8_t* q, float* scales, int64_t n, int64_t block,
                   cudaStream_t stream = nullptr);

// x = q * scale, or x += q * scale (_add).
void dequantize_int8(const int8_t* q, const float* scales, float* x, int64_t n, int64_t block,
                     cudaStream_t stream = nullptr);
void dequantize_int8_add(const int8_t* q, const float* scales, float* x, int64_t n, int64_t block,
                         cudaStream_t stream = nullptr);
void dequantize_int4(const uint8_t* q, const float* scales, float* x, int64_t n, int64_t block,
                     cudaStream_t stream = nullptr);
void dequantize_int4_add(const uint8_t* q, const float* scales, float* x, int64_t n, int64_t block,
                         cudaStream_t stream = nullptr);

// x = q * scale rounded to the nearest bf16 (kernels/quant/quantize.hpp's _bf16:
// qwZ's gather on a bf16 wire), bit for bit dequantize then round_to_bf16;
// q is int8 (bits 8) or packed int4 (bits 4).
void dequantize_bf16(int bits, const void* q, const float* scales, float* x, int64_t n, int64_t block,
                     cudaStream_t stream = nullptr);

// qgZ step 1 unfused (kernels/quant/qgz_reorder.hpp; kernels/cuda/qgz_reorder.cu):
// out[x*Y*s + y*s + i] = grad[(y*X + x)*s + i], n a multiple of X*Y (checked by the caller).
void qgz_reorder(const float* grad, float* out, int64_t n, int X, int Y, cudaStream_t stream = nullptr);

// qgZ step 1 fused: reorder grad (n = X*Y*s floats, slice y*X + x at
// (y*X + x)*s) into X chunks [S_x, S_{X+x}, ...] and quantize them at `bits`
// (4, or 8 for intra_node_gradient_bits = 8) in one pass, never writing the
// reordered fp32 buffer: q/scales are what quantize_int{4,8} of the reordered
// buffer gives. s must be a multiple of block (the engine pads units to P*block).
void qgz_reorder_quantize(int bits, const float* grad, void* q, float* scales, int64_t n, int X, int Y,
                          int64_t block, cudaStream_t stream = nullptr);

// qgZ's intra-node hop fused (kernels/quant/quant_reduce.hpp): k chunks of n
// elements in (chunk j: bytes at q_in + j*bytes(n), scales at
// scales_in + j*n/block), summed per block in fp32 in chunk order, requantized.
void dequant_sum_requant_int4(const uint8_t* q_in, const float* scales_in, int k, uint8_t* q_out,
                              float* scales_out, int64_t n, int64_t block, cudaStream_t stream = nullptr);
void dequant_sum_requant_int8(const int8_t* q_in, const float* scales_in, int k, int8_t* q_out,
                              float* scales_out, int64_t n, int64_t block, cudaStream_t stream = nullptr);
void dequant_sum_requant_int8_to_int4(const int8_t* q_in, const float* scales_in, int k, uint8_t* q_out,
                                      float* scales_out, int64_t n, int64_t block,
                                      cudaStream_t stream = nullptr);
void dequant_sum_requant_int4_to_int8(const uint8_t* q_in, const float* scales_in, int k, int8_t* q_out,
                                      float* scales_out, int64_t n, int64_t block,
                                      cudaStream_t stream = nullptr);

// The final hop: out (n floats) = the fp32 sum of the k dequantized chunks.
void dequant_sum_int4(const uint8_t* q_in, const float* scales_in, int k, float* out, int64_t n,
                      int64_t block, cudaStream_t stream = nullptr);
void dequant_sum_int8(const int8_t* q_in, const float* scales_in, int k, float* out, int64_t n, int64_t block,
                      cudaStream_t stream = nullptr);

}  // namespace zeropp::cuda
