// The CUDA build's Stager (src/comm/stager.hpp) for comm.device_staging:
// staging memory is pinned host memory (cudaMallocHost: the copies run at the
// link's rate and MPI may register it), copies are cudaMemcpyAsync with
// cudaMemcpyDefault (unified addressing tells device from host pointers, so a
// host buffer works too) on the compute stream (kernels/runtime/device_context.hpp),
// then a synchronisation of that stream: to_host sees the engine's writes and
// to_device's bytes are in place when it returns.
// It uses the calling thread's current device (the engine selects it; several
// ranks may share one GPU, which is the point where NCCL refuses). Failures
// abort with file:line and rank (kernels/cuda/check.hpp).
#pragma once

#include "src/comm/stager.hpp"

namespace zeropp::cuda {

class PinnedStager final : public Stager {
 public:
  const char* name() const override { return "pinned host memory"; }
  void* allocate(size_t bytes) override;
  void release(void* host) override;
  void to_host(void* host, const void* dev, size_t bytes) override;
  void to_device(void* dev, const void* host, size_t bytes) override;
};

}  // namespace zeropp::cuda
