// Column sums of an N x C grid on the GPU, two-level and deterministic: the
// parameter gradients of LayerNorm, RMSNorm, the linear layer's bias and bias +
// GELU (out_k[c] += sum over n of term_k(n, c), K terms per element).
//
// One thread per column walking all N rows would fill a few SMs at the model's
// C (768 threads); here blocks of 32 columns x 8 row lanes take tiles of
// kTileRows rows. Level 1: each thread adds its rows of the tile (lane y: rows
// y, y + 8, ...) in order, the 8 lanes are added in lane order through shared
// memory, one partial per (tile, column). Level 2: one thread per column adds
// the tiles' partials in tile order to out. Every order depends on N and C
// only: the same bits on every run and GPU, no atomics. Against the host's
// sequential sum over rows it agrees to the rounding of N additions: relative
// 1e-5 plus absolute 1e-6 per row for terms of magnitude about 1
// (tests/cuda/test_cuda_kernels.cpp, kColumnSums).
//
// term(n, c, v) fills v[0..K-1] for element (n, c); it is called once per
// element, so it may also write an elementwise output (bias + GELU's dpre).
#pragma once

#include <stdexcept>
#include <string>

#include "kernels/cuda/launch.cuh"

namespace zeropp::cuda::detail {

constexpr int kColumnsPerBlock = 32, kRowLanes = 8, kTileRows = 64;

template <int K>
struct ColumnOuts {
  float* p[K];
};

template <int K, class F>
__global__ void __launch_bounds__(kColumnsPerBlock* kRowLanes)
    column_partials(int64_t N, int C, F term, float* partial) {
  __shared__ float lanes[K][kRowLanes][kColumnsPerBlock];
  const int c = int(blockIdx.x) * kColumnsPerBlock + int(threadIdx.x);
  const int64_t r0 = int64_t(blockIdx.y) * kTileRows, r1 = r0 + kTileRows < N ? r0 + kTileRows : N;
  float acc[K] = {};
  if (c < C)
    for (int64_t n = r0 + threadIdx.y; n < r1; n += kRowLanes) {
      float v[K];
      term(n, c, v);
#pragma unroll
      for (int k = 0; k < K; ++k) acc[k] += v[k];
    }
#pragma unroll
  for (int k = 0; k < K; ++k) lanes[k][threadIdx.y][threadIdx.x] = acc[k];
  __syncthreads();
  if (threadIdx.y != 0 || c >= C) return;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    float t = lanes[k][0][threadIdx.x];
    for (int y = 1; y < kRowLanes; ++y) t += lanes[k][y][threadIdx.x];
    partial[(int64_t(k) * gridDim.y + blockIdx.y) * C + c] = t;
  }
}

template <int K>
__global__ void __launch_bounds__(kThreads)
    column_totals(int tiles, int C, const float* partial, ColumnOuts<K> out) {
  const int c = int(blockIdx.x) * kThreads + int(threadIdx.x);
  if (c >= C) return;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const float* pk = partial + int64_t(k) * tiles * C + c;
    float t = pk[0];
    for (int i = 1; i < tiles; ++i) t += pk[int64_t(i) * C];
    out.p[k][c] += t;
  }
}

// out.p[k][c] += sum over n < N of term's v[k] at (n, c), on `stream`.
template <int K, class F>
void column_sums(int64_t N, int C, F term, ColumnOuts<K> out, cudaStream_t stream) {
  if (N <= 0 || C <= 0) return;
  const int64_t tiles = (N + kTileRows - 1) / kTileRows;
  if (tiles > 65535)
    throw std::invalid_argument("column_sums: " + std::to_string(N) + " rows, over one grid");
  float* partial = nullptr;
  ZCHECK_CUDA(
      cudaMallocAsync(reinterpret_cast<void**>(&partial), size_t(K) * size_t(tiles) * size_t(C) * 4, stream));
  const dim3 grid(unsigned((C + kColumnsPerBlock - 1) / kColumnsPerBlock), unsigned(tiles));
  column_partials<K><<<grid, dim3(kColumnsPerBlock, kRowLanes), 0, stream>>>(N, C, term, partial);
  ZCHECK_CUDA(cudaGetLastError());
  column_totals<K>
      <<<unsigned((C + kThreads - 1) / kThreads), kThreads, 0, stream>>>(int(tiles), C, partial, out);
  ZCHECK_CUDA(cudaGetLastError());
  ZCHECK_CUDA(cudaFreeAsync(partial, stream));
}

}  // namespace zeropp::cuda::detail
