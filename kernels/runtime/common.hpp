// Types shared by every kernel.
//
// Kernels work on flat, non-owning 1-D Kokkos Views; shapes are passed as
// integers and documented in each kernel's header (row-major, llm.c style).
// Kokkos is the host's execution backend: the kernels here run on Kokkos'
// default HOST execution space (Serial with Debian's Kokkos; OpenMP or
// Threads where a site's Kokkos has them), also when that Kokkos was built
// with CUDA. The GPU path is kernels/cuda, reached through the device
// context (kernels/runtime/device_context.hpp), not Kokkos' CUDA backend: the host
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

}  // namespace zeropp
