// Memory in the execution backend's space, and the scopes that may touch it.
//
// device_alloc returns zero-filled bytes in Kokkos' MemSpace (kernels/runtime/common.hpp):
// host memory with Debian's Serial Kokkos. With a device context installed
// (kernels/runtime/device_context.hpp) it is GPU memory instead (cudaMalloc, zeroed on
// the context's stream), device_free is cudaFree and the transfers are
// cudaMemcpy. Where an allocation lives is decided when it is made and goes
// with it to device_free (Buffer<T> keeps it), so memory returns to its own
// allocator whichever context is installed at the free: a device buffer that
// outlives the run's context is still cudaFree'd, a host one made before the
// context is installed never reaches cudaFree. Host code
// never dereferences it; kernels, the communicator and explicit transfers
// (copy_to_device / copy_to_host) do.
//
// Test mode (ZEROPP_POISON_HOST_ACCESS=1 in the environment, read at the
// first allocation): allocations come from one mmap'd arena that is kept
// PROT_NONE except while a DeviceAccess scope is open, so any other host
// access faults (a SIGSEGV handler names the arena and prints a backtrace).
// Scopes open automatically around every Kokkos parallel_for / reduce /
// scan and deep_copy (through Kokkos' tool callbacks) and around the BLAS
// calls (kernels/gemm/gemm.cpp); callers open one around communicator calls.
#pragma once

#include <cstdint>
#include <utility>

#include "kernels/runtime/common.hpp"
#include "kernels/runtime/device_context.hpp"

namespace zeropp {

// Where device_alloc's memory is: Device while a device context is installed
// (CUDA builds), Host otherwise (the poisoned arena included).
enum class MemoryPlace { Host, Device };

struct DeviceAllocation {
  void* p = nullptr;  // null for 0 bytes
  MemoryPlace place = MemoryPlace::Host;
};
DeviceAllocation device_alloc(const char* label, int64_t bytes);
// Returns `a` to the allocator that made it.
void device_free(const DeviceAllocation& a);

// Whether the poisoned arena is in use (test mode above).
bool poison_host_access();

// While one exists (they nest), device memory is accessible from the host.
class DeviceAccess {
 public:
  DeviceAccess();
  ~DeviceAccess();
  DeviceAccess(const DeviceAccess&) = delete;
  DeviceAccess& operator=(const DeviceAccess&) = delete;
};

// f() with device memory accessible (a communicator call on device buffers).
template <class F>
auto with_device_access(F&& f) {
  DeviceAccess access;
  return std::forward<F>(f)();
}

#ifdef ZEROPP_HAVE_CUDA
// The transfers below with a device context installed: cudaMemcpyAsync on its
// stream, then a wait for it (the host's side may be reused at once).
void device_upload(void* dst, const void* host, int64_t bytes);
void device_download(void* host, const void* src, int64_t bytes);
#endif

// Explicit transfers between host memory and device memory (n elements).
template <class T>
void copy_to_device(const T* host, Vec<T> dst) {
#ifdef ZEROPP_HAVE_CUDA
  if (device_context()) return device_upload(dst.data(), host, int64_t(dst.extent(0) * sizeof(T)));
#endif
  Kokkos::deep_copy(dst, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                             host, dst.extent(0)));
}
template <class T>
void copy_to_host(CVec<T> src, T* host) {
#ifdef ZEROPP_HAVE_CUDA
  if (device_context()) return device_download(host, src.data(), int64_t(src.extent(0) * sizeof(T)));
#endif
  Kokkos::deep_copy(
      Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(host, src.extent(0)), src);
}

}  // namespace zeropp
