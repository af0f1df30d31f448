// An owning, typed buffer in the execution backend's memory space
// (kernels/runtime/device_memory.hpp): the engine's, qgZ's, hpZ's and the
// optimizer's buffers. Host code passes data() and view() to kernels and
// communicator calls, never dereferences them; to_host / from_host are the
// explicit transfers.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/ops/buffer_ops.hpp"
#include "kernels/runtime/device_memory.hpp"

namespace zeropp {

template <class T>
class Buffer {
 public:
  Buffer() = default;
  // n zero-filled elements; label names the allocation (Kokkos tools).
  Buffer(const char* label, int64_t n) : n_(n), mem_(device_alloc(label, n * int64_t(sizeof(T)))) {}
  ~Buffer() { device_free(mem_); }
  Buffer(Buffer&& o) noexcept : n_(std::exchange(o.n_, 0)), mem_(std::exchange(o.mem_, {})) {}
  Buffer& operator=(Buffer&& o) noexcept {
    std::swap(n_, o.n_);
    std::swap(mem_, o.mem_);
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  T* data() const { return static_cast<T*>(mem_.p); }
  // Where the memory was allocated (and is freed, whatever context is installed then).
  MemoryPlace place() const { return mem_.place; }
  int64_t size() const { return n_; }
  int64_t bytes() const { return n_ * int64_t(sizeof(T)); }
  // [offset, offset + n) as a kernel argument (whole buffer by default).
  Vec<T> view(int64_t offset = 0) const { return Vec<T>(data() + offset, n_ - offset); }
  Vec<T> view(int64_t offset, int64_t n) const { return Vec<T>(data() + offset, n); }

 private:
  int64_t n_ = 0;
  DeviceAllocation mem_;
};

// The first n elements (all by default), copied to host memory.
template <class T>
std::vector<T> to_host(const Buffer<T>& b, int64_t n = -1) {
  std::vector<T> h(static_cast<size_t>(n < 0 ? b.size() : n));
  copy_to_host(CVec<T>(b.data(), int64_t(h.size())), h.data());
  return h;
}

// Sets all elements to v (a kernel).
template <class T>
void fill(const Buffer<T>& b, T v) {
  fill(b.view(), v);
}

}  // namespace zeropp
