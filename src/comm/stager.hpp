// Host staging of device buffers for a host communicator
// (src/comm/staging_communicator.hpp): where staging memory comes from and
// how bytes move between it and the caller's buffers. The CUDA build's
// stager (src/device/cuda_stager.hpp) allocates pinned host memory and copies
// with cudaMemcpy; the tests use one over plain host memory and memcpy, which
// exercises the same staging path without a device.
#pragma once

#include <cstddef>

namespace zeropp {

class Stager {
 public:
  virtual ~Stager() = default;
  virtual const char* name() const = 0;
  // Host memory of `bytes` (> 0) that the host communicator can use, and its return.
  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* host) = 0;
  // Blocking copies between the caller's buffer (`dev`) and staging memory:
  // to_host sees every write enqueued before it; to_device's bytes are in
  // place, for work enqueued after it, when it returns.
  virtual void to_host(void* host, const void* dev, size_t bytes) = 0;
  virtual void to_device(void* dev, const void* host, size_t bytes) = 0;
};

}  // namespace zeropp
