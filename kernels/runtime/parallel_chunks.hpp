// The elementwise kernels' threads inside a rank (train.threads).
//
// Kokkos is the Serial backend here (Debian's Kokkos 3.4), so the kernels run
// their loops under OpenMP themselves: parallel_chunks cuts [0, n) into fixed
// chunks of `chunk` items and spreads whole chunks over the threads (static
// schedule). The cut depends on n and chunk only, never on the thread count
// (column_chunk's does, where the cut cannot change a result), and each chunk is computed as it would be on
// one thread, so results are bitwise the same for any count; a reduction keeps one partial per chunk and adds
// them in chunk order. Each chunk calls simd_dispatch itself: the parallel region's outlined body would not
// carry the dispatched ISA.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/runtime/kernel_hooks.hpp"

namespace zeropp {

// Threads of the elementwise kernels; 1 (the default) runs no parallel region.
void set_kernel_threads(int n);
int kernel_threads();
// The start-up tables' line: instruction set and threads, "AVX-512 (2 threads)".
std::string elementwise_kernels_name();

// Elements per chunk: large enough that a chunk's work (~10 µs) pays for
// handing it to a thread.
inline constexpr int64_t kChunkElements = int64_t(1) << 15;

// Columns per chunk of the kernels that sum over rows (bias and weight
// gradients): a thread takes whole columns, each summed in row order, so the
// sums are the same for any cut. One thread takes the whole width: narrow
// strips of rows kilobytes apart defeat the prefetchers and crowd a few cache
// sets (64 columns made bias_gelu_backward 3x slower, docs/performance.md).
// More threads take one strip each, a multiple of 16 columns.
inline int64_t column_chunk(int64_t cols) {
  const int64_t per_thread = (cols + kernel_threads() - 1) / kernel_threads();
  return std::max<int64_t>(1, (per_thread + 15) / 16 * 16);
}

// Rows per chunk for rows of `row` elements.
inline int64_t rows_per_chunk(int64_t row) {
  return std::max<int64_t>(1, kChunkElements / std::max<int64_t>(1, row));
}

inline int64_t chunk_count(int64_t n, int64_t chunk) { return (n + chunk - 1) / chunk; }

// f(chunk_index, begin, end) for each chunk of [0, n).
template <class F>
void parallel_chunks(int64_t n, int64_t chunk, F&& f) {
  const int64_t chunks = chunk_count(n, chunk);
  const int threads = int(std::min<int64_t>(kernel_threads(), chunks));
  const KernelScope scope;  // device-buffer access and collective progress, as around a Kokkos kernel
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t i = 0; i < chunks; ++i) f(i, i * chunk, std::min(n, (i + 1) * chunk));
}

}  // namespace zeropp
