#include "src/device/cuda_stager.hpp"

#include "kernels/cuda/check.hpp"

namespace zeropp::cuda {

void* PinnedStager::allocate(size_t bytes) {
  void* p = nullptr;
  ZCHECK_CUDA(cudaMallocHost(&p, bytes));
  return p;
}

void PinnedStager::release(void* host) { ZCHECK_CUDA(cudaFreeHost(host)); }

void PinnedStager::to_host(void* host, const void* dev, size_t bytes) {
  ZCHECK_CUDA(cudaMemcpy(host, dev, bytes, cudaMemcpyDefault));
}

void PinnedStager::to_device(void* dev, const void* host, size_t bytes) {
  ZCHECK_CUDA(cudaMemcpy(dev, host, bytes, cudaMemcpyDefault));
}

}  // namespace zeropp::cuda
