#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/cuda/bf16.cuh"
#include "kernels/cuda/quant_device.cuh"
#include "kernels/cuda/quant_fp8.cuh"
#include "kernels/quant/quant_ref.hpp"

namespace zeropp::cuda {

namespace {

using namespace quant_device;

constexpr int kFp8Max = 448;

// One warp per block: the lanes' absmax reduced over the warp, then the codes.
__global__ void quantize_fp8_kernel(const float* x, uint8_t* q, float* scales, int64_t nb, int64_t block) {
  const int64_t b = warp_index();
  if (b >= nb) return;
  const int lane = int(threadIdx.x & 31u);
  const float* xb = x + b * block;
  uint32_t m = 0;
  for (int64_t i = lane; i < block; i += 32) m = max(m, absbits(xb[i]));
  m = __reduce_max_sync(0xffffffffu, m);
  const Params p = block_params(m, kFp8Max);
  if (lane == 0) scales[b] = p.scale;
  uint8_t* qb = q + b * block;
  for (int64_t i = lane; i < block; i += 32)
    qb[i] = p.inv == 0.0f ? uint8_t(0)
                          : uint8_t(__nv_cvt_float_to_fp8(__fmul_rn(__fmul_rn(xb[i], p.pre), p.inv),
                                                          __NV_SATFINITE, __NV_E4M3));
}

__global__ void dequantize_fp8_kernel(const uint8_t* q, const float* scales, float* x, int64_t n,
                                      int64_t block, bool bf16) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const __half h(__nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(q[i]), __NV_E4M3));
    const float d = __fmul_rn(__half2float(h), scales[i / block]);
    x[i] = bf16 ? detail::bf16_bits_to_fp32(detail::fp32_to_bf16_bits(d)) : d;
  }
}

unsigned ctas(const char* who, int64_t work, int64_t per_cta) {
  const int64_t c = (work + per_cta - 1) / per_cta;
  if (c > int64_t(0x7fffffff))
    throw std::invalid_argument(std::string(who) + ": too many blocks for one grid");
  return unsigned(c);
}

}  // namespace

void quantize_fp8(const float* x, uint8_t* q, float* scales, int64_t n, int64_t block, cudaStream_t stream) {
  quant_ref::check_shape("cuda::quantize_fp8", 8, n, block);
  if (n == 0) return;
  const int64_t nb = n / block;
  quantize_fp8_kernel<<<ctas("cuda::quantize_fp8", nb, kWarpsPerCta), kThreads, 0, stream>>>(x, q, scales, nb,
                                                                                             block);
  check_launch("cuda::quantize_fp8");
}

void dequantize_fp8(const uint8_t* q, const float* scales, float* x, int64_t n, int64_t block, bool bf16,
                    cudaStream_t stream) {
  quant_ref::check_shape("cuda::dequantize_fp8", 8, n, block);
  if (n == 0) return;
  // Grid-stride: at most 64k CTAs, each thread a few elements of large units.
  const unsigned grid = std::min(ctas("cuda::dequantize_fp8", n, kThreads), 65536u);
  dequantize_fp8_kernel<<<grid, kThreads, 0, stream>>>(q, scales, x, n, block, bf16);
  check_launch("cuda::dequantize_fp8");
}

}  // namespace zeropp::cuda
