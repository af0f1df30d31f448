#include "src/device/cuda_stager.hpp"

#include "kernels/cuda/check.hpp"
#include "kernels/runtime/device_context.hpp"

namespace zeropp::cuda {

namespace {

// On the compute stream, then waited for: the copy follows every kernel
// queued there and is complete when the call returns.
void copy_on_compute_stream(void* to, const void* from, size_t bytes) {
  const cudaStream_t s = compute_stream();
  ZCHECK_CUDA(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, s));
  ZCHECK_CUDA(cudaStreamSynchronize(s));
}

}  // namespace

void* PinnedStager::allocate(size_t bytes) {
  void* p = nullptr;
  ZCHECK_CUDA(cudaMallocHost(&p, bytes));
  return p;
}

void PinnedStager::release(void* host) { ZCHECK_CUDA(cudaFreeHost(host)); }

void PinnedStager::to_host(void* host, const void* dev, size_t bytes) {
  copy_on_compute_stream(host, dev, bytes);
}

void PinnedStager::to_device(void* dev, const void* host, size_t bytes) {
  copy_on_compute_stream(dev, host, bytes);
}

}  // namespace zeropp::cuda
