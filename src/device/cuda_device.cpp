#include "src/device/cuda_device.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>

namespace zeropp::cuda {

namespace {

std::string cuda_error(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

std::string explain(cudaError_t e) {
  switch (e) {
    case cudaErrorInsufficientDriver:
      return "no usable NVIDIA driver (the driver is missing or older than the CUDA runtime) (" +
             cuda_error(e) + ")";
    case cudaErrorNoDevice:
      return "no CUDA-capable device is visible (" + cuda_error(e) + ")";
    default:
      return "the CUDA runtime could not enumerate devices (" + cuda_error(e) + ")";
  }
}

// The stream-ordered pool (cudaMallocAsync: bf16 operand copies, reduction
// partials, NCCL scratch) returns freed memory to the driver at every
// synchronisation when its release threshold is 0, the default; each step
// would then pay for fresh allocations. Keep it all.
cudaError_t keep_pool_memory(int ordinal) {
  cudaMemPool_t pool = nullptr;
  cudaError_t e = cudaDeviceGetDefaultMemPool(&pool, ordinal);
  uint64_t keep = UINT64_MAX;
  if (e == cudaSuccess) e = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  return e;
}

}  // namespace

std::string DeviceInfo::describe() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "device %d: %s (sm_%d%d, %d SMs, %.1f GiB)", ordinal, name.c_str(), cc_major,
                cc_minor, sm_count, double(memory_bytes) / double(1ull << 30));
  return buf;
}

int device_count(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear it, so later calls do not report it again
    if (why) *why = explain(e);
    return 0;
  }
  if (n == 0 && why) *why = explain(cudaErrorNoDevice);
  return n;
}

int device_for_local_rank(int local_rank, int ranks_per_node, int count, bool shared) {
  if (ranks_per_node < 1 || local_rank < 0 || local_rank >= ranks_per_node)
    throw DeviceError("device selection: local rank " + std::to_string(local_rank) + " is not in [0, " +
                      std::to_string(ranks_per_node) + ")");
  if (count < 1) throw DeviceError("device selection: no CUDA device is visible");
  if (ranks_per_node > count && !shared)
    throw DeviceError("device selection: " + std::to_string(ranks_per_node) + " ranks per node but only " +
                      std::to_string(count) +
                      " visible CUDA device(s); run one rank per GPU (check CUDA_VISIBLE_DEVICES and the "
                      "launcher's ranks per node)");
  return local_rank % count;
}

DeviceInfo select_device(int local_rank, int ranks_per_node, bool shared) {
  std::string why;
  const int count = device_count(&why);
  const std::string who = "local rank " + std::to_string(local_rank) + ": ";
  if (count == 0)
    throw DeviceError(who + "CUDA was requested but " + why +
                      "; check nvidia-smi and CUDA_VISIBLE_DEVICES, or build/run without CUDA");
  DeviceInfo d;
  try {
    d.ordinal = device_for_local_rank(local_rank, ranks_per_node, count, shared);
  } catch (const DeviceError& e) {
    throw DeviceError(who + e.what());
  }
  cudaError_t e = cudaSetDevice(d.ordinal);
  cudaDeviceProp prop{};
  if (e == cudaSuccess) e = cudaGetDeviceProperties(&prop, d.ordinal);
  if (e == cudaSuccess)
    e = cudaFree(nullptr);  // creates the context now: a broken device fails here, not later
  if (e == cudaSuccess) e = keep_pool_memory(d.ordinal);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw DeviceError(who + "cannot use CUDA device " + std::to_string(d.ordinal) + " (" + cuda_error(e) +
                      ")");
  }
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.memory_bytes = prop.totalGlobalMem;
  d.sm_count = prop.multiProcessorCount;
  return d;
}

}  // namespace zeropp::cuda
