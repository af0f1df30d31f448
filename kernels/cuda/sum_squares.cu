// Sum of squares on the GPU (kernels/sum_squares.hpp is the contract), for the
// gradient norm. Two launches: a fixed grid of 1024 blocks, each thread
// accumulating x^2 in double over a grid-stride loop and each block reducing
// its threads to one partial; then one block summing the 1024 partials. The
// grid does not depend on the device, so the result is the same bits on every
// GPU and run; against the host's sequential double sum it agrees to relative
// 1e-11 (both sum exact float squares in double). The one value returned
// waits for `stream` (the algorithm needs it on the host, for clipping).
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

namespace {
constexpr int kBlocks = 1024;

// The block's sum of v, valid in thread 0.
__device__ double block_sum(double v) {
  __shared__ double scratch[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = detail::warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) v = detail::warp_sum(lane < warps ? scratch[lane] : 0.0);
  return v;
}

__global__ void __launch_bounds__(detail::kThreads)
    sum_squares_partial(const float* x, int64_t n, double* partial) {
  double acc = 0.0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    acc += double(x[i]) * double(x[i]);
  acc = block_sum(acc);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

__global__ void __launch_bounds__(detail::kThreads) sum_partials(const double* partial, double* total) {
  double acc = 0.0;
  for (int i = threadIdx.x; i < kBlocks; i += blockDim.x) acc += partial[i];
  acc = block_sum(acc);
  if (threadIdx.x == 0) *total = acc;
}
}  // namespace

double sum_squares(const float* x, int64_t n, cudaStream_t stream) {
  if (n <= 0) return 0.0;
  double* partial = nullptr;  // kBlocks partials, then the total
  ZCHECK_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&partial), (kBlocks + 1) * sizeof(double), stream));
  sum_squares_partial<<<kBlocks, detail::kThreads, 0, stream>>>(x, n, partial);
  ZCHECK_CUDA(cudaGetLastError());
  sum_partials<<<1, detail::kThreads, 0, stream>>>(partial, partial + kBlocks);
  ZCHECK_CUDA(cudaGetLastError());
  double total = 0.0;
  ZCHECK_CUDA(cudaMemcpyAsync(&total, partial + kBlocks, sizeof total, cudaMemcpyDeviceToHost, stream));
  ZCHECK_CUDA(cudaFreeAsync(partial, stream));
  ZCHECK_CUDA(cudaStreamSynchronize(stream));
  return total;
}

}  // namespace zeropp::cuda
