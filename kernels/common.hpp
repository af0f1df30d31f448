// Types shared by every kernel.
//
// Kernels work on flat, non-owning 1-D Kokkos Views; shapes are passed as
// integers and documented in each kernel's header (row-major, llm.c style).
// Kokkos is the host's execution backend: the kernels here run on Kokkos'
// default HOST execution space (Serial with Debian's Kokkos; OpenMP or
// Threads where a site's Kokkos has them), also when that Kokkos was built
// with CUDA. The GPU path is kernels/cuda, reached through the device
// context (kernels/device_context.hpp), not Kokkos' CUDA backend: the host
// kernels use x86 SIMD and OpenMP, which device code cannot.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>

namespace zeropp {

using ExecSpace = Kokkos::DefaultHostExecutionSpace;
using MemSpace = ExecSpace::memory_space;

// Owning buffer.
template <class T>
using Buf = Kokkos::View<T*, MemSpace>;
// Non-owning views into buffers that someone else keeps alive (e.g. a slice
// of a unit's flat parameter buffer).
template <class T>
using Vec = Kokkos::View<T*, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using CVec = Kokkos::View<const T*, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// A sub-range [offset, offset+n) of a view, still non-owning.
template <class V>
inline auto sub(const V& v, int64_t offset, int64_t n) {
  return Kokkos::subview(v, Kokkos::make_pair(offset, offset + n));
}

using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<int64_t>>;

// Calls f(c0, c1) for [0, C) in chunks of 64 columns, one work item per chunk:
// per-column sums over rows (dweight, dbias) with no two items writing one column.
constexpr int kColumnChunk = 64;
template <class F>
void for_column_chunks(const char* name, int C, const F& f) {
  constexpr int kChunk = kColumnChunk;
  Kokkos::parallel_for(
      name, Range(0, (C + kChunk - 1) / kChunk), KOKKOS_LAMBDA(const int64_t chunk) {
        const int c0 = int(chunk) * kChunk;
        f(c0, c0 + kChunk < C ? c0 + kChunk : C);
      });
}

// Calls f(i0, i1) for [0, n) in chunks of 4096 elements, one work item per
// chunk: elementwise kernels whose inner loop the compiler should vectorise
// (a plain loop over [i0, i1) does; one call per element may not).
template <class F>
void for_element_chunks(const char* name, int64_t n, const F& f) {
  constexpr int64_t kChunk = 4096;
  Kokkos::parallel_for(
      name, Range(0, (n + kChunk - 1) / kChunk), KOKKOS_LAMBDA(const int64_t chunk) {
        const int64_t i0 = chunk * kChunk;
        f(i0, i0 + kChunk < n ? i0 + kChunk : n);
      });
}

}  // namespace zeropp
