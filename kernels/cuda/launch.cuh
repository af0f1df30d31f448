// What the model's CUDA kernels (kernels/cuda/<op>.cu) share: an elementwise
// launcher with a grid-stride loop, and warp and block reductions.
//
// The reductions combine in a fixed tree order, so a kernel gives the same bits
// on every run (deterministic), though not the host's sequential order: kernels
// that reduce are compared with their host twins under a stated tolerance
// (tests/cuda/test_cuda_kernels.cpp), as are those calling expf, powf or
// sinf (an ulp or two from glibc's); elementwise arithmetic and sums taken in
// the host's order agree bit for bit: these files are compiled with
// --fmad=false (cmake/ZeroppCuda.cmake) and the host kernels with
// -ffp-contract=off (CMakeLists.txt; GCC would contract a*b+c on their AVX2
// and AVX-512 paths), so both round every operation as written, in the same
// association.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/check.hpp"

namespace zeropp::cuda::detail {

constexpr int kThreads = 256;
constexpr unsigned kFullMask = 0xffffffffu;

template <class F>
__global__ void __launch_bounds__(kThreads) each_kernel(int64_t n, F f) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) f(i);
}

// f(i) for i in [0, n) on `stream`; n <= 0 launches nothing.
template <class F>
void for_each_index(int64_t n, cudaStream_t stream, F f) {
  if (n <= 0) return;
  // A capped grid: the loop covers the rest, and no grid dimension can overflow.
  const unsigned blocks = unsigned(std::min<int64_t>((n + kThreads - 1) / kThreads, int64_t(1) << 16));
  each_kernel<<<blocks, kThreads, 0, stream>>>(n, f);
  ZCHECK_CUDA(cudaGetLastError());
}

// Blocks of kThreads threads, one warp per row: rows / warps-per-block, rounded up.
inline unsigned blocks_for_warps(int64_t rows) {
  constexpr int warps = kThreads / 32;
  return unsigned((rows + warps - 1) / warps);
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}
__device__ __forceinline__ double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}

// The sum (or max) over the whole block, returned to every thread. `scratch`
// holds 32 values in shared memory; every thread of the block must call it.
template <bool Max>
__device__ float block_reduce(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  v = Max ? warp_max(v) : warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const float none = Max ? -INFINITY : 0.0f;
  v = threadIdx.x < warps ? scratch[threadIdx.x] : none;
  if (warp == 0) v = Max ? warp_max(v) : warp_sum(v);
  if (threadIdx.x == 0) scratch[0] = v;
  __syncthreads();
  v = scratch[0];
  __syncthreads();  // scratch may be reused by the next call
  return v;
}

}  // namespace zeropp::cuda::detail
