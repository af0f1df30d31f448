// sum_i value(i) in double on the GPU, as the host needs it: sum_squares (the
// gradient norm) and the buffer operations' sum and dot. Two launches: a fixed
// grid of kReduceBlocks blocks, each thread accumulating in double over a
// grid-stride loop and each block reducing its threads to one partial; then
// one block summing the partials. The grid does not depend on the device, so
// the result is the same bits on every GPU and run; against the host's
// sequential double sum it agrees to rounding of the double additions. The
// value returned waits for `stream`.
#pragma once

#include "kernels/cuda/launch.cuh"

namespace zeropp::cuda::detail {

constexpr int kReduceBlocks = 1024;

// The block's sum of v, valid in thread 0.
__device__ __forceinline__ double block_sum(double v, double* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) v = warp_sum(lane < warps ? scratch[lane] : 0.0);
  return v;
}

template <class F>
__global__ void __launch_bounds__(kThreads) reduce_partial(int64_t n, F value, double* partial) {
  __shared__ double scratch[32];
  double acc = 0.0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    acc += value(i);
  acc = block_sum(acc, scratch);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

// A template, so that every file using reduce_sum may define it (no separate
// compilation of device code).
template <int Blocks>
__global__ void __launch_bounds__(kThreads) reduce_partials(const double* partial, double* total) {
  __shared__ double scratch[32];
  double acc = 0.0;
  for (int i = threadIdx.x; i < Blocks; i += blockDim.x) acc += partial[i];
  acc = block_sum(acc, scratch);
  if (threadIdx.x == 0) *total = acc;
}

template <class F>
double reduce_sum(int64_t n, cudaStream_t stream, F value) {
  if (n <= 0) return 0.0;
  double* partial = nullptr;  // kReduceBlocks partials, then the total
  ZCHECK_CUDA(
      cudaMallocAsync(reinterpret_cast<void**>(&partial), (kReduceBlocks + 1) * sizeof(double), stream));
  reduce_partial<<<kReduceBlocks, kThreads, 0, stream>>>(n, value, partial);
  ZCHECK_CUDA(cudaGetLastError());
  reduce_partials<kReduceBlocks><<<1, kThreads, 0, stream>>>(partial, partial + kReduceBlocks);
  ZCHECK_CUDA(cudaGetLastError());
  double total = 0.0;
  ZCHECK_CUDA(cudaMemcpyAsync(&total, partial + kReduceBlocks, sizeof total, cudaMemcpyDeviceToHost, stream));
  ZCHECK_CUDA(cudaFreeAsync(partial, stream));
  ZCHECK_CUDA(cudaStreamSynchronize(stream));
  return total;
}

}  // namespace zeropp::cuda::detail
