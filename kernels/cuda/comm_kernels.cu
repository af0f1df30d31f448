// Elementwise kernels of the NCCL backend (kernels/cuda/comm_kernels.cuh).
// Grid-stride loops; the adds use __fadd_rn/__dadd_rn, never an FMA.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kernels/cuda/bf16.cuh"
#include "kernels/cuda/comm_kernels.cuh"

namespace zeropp::cuda {

namespace {

constexpr int kThreads = 256;

// `own` and `acc` may be the same block (the last hop writes block r of the
// input in place): no __restrict__ on them; each element is read before it is written.
__global__ void ring_accumulate_kernel(const void* __restrict__ wire_in, bool wire_bf16, const float* own,
                                       float* acc, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += int64_t(gridDim.x) * kThreads) {
    const float w = wire_bf16 ? detail::bf16_bits_to_fp32(static_cast<const uint16_t*>(wire_in)[i])
                              : static_cast<const float*>(wire_in)[i];
    acc[i] = __fadd_rn(w, own[i]);
  }
}

__global__ void to_bf16_kernel(const float* __restrict__ in, uint16_t* __restrict__ out, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += int64_t(gridDim.x) * kThreads) {
    out[i] = detail::fp32_to_bf16_bits(in[i]);
  }
}

__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }

template <class T>
__global__ void sum_members_kernel(const T* __restrict__ all, int p, T* __restrict__ out, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += int64_t(gridDim.x) * kThreads) {
    T s = all[i];
    for (int m = 1; m < p; ++m) s = add(s, all[int64_t(m) * n + i]);
    out[i] = s;
  }
}

unsigned grid_for(int64_t n) {
  const int64_t g = (n + kThreads - 1) / kThreads;
  return unsigned(g < 65536 ? g : 65536);  // grid-stride beyond
}

void check_launch(const char* who) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(who) + ": kernel launch failed: " + cudaGetErrorName(e) + " (" +
                             cudaGetErrorString(e) + ")");
}

}  // namespace

void ring_accumulate(const void* wire_in, bool wire_bf16, const float* own, float* acc, int64_t n,
                     cudaStream_t stream) {
  if (n <= 0) return;
  ring_accumulate_kernel<<<grid_for(n), kThreads, 0, stream>>>(wire_in, wire_bf16, own, acc, n);
  check_launch("cuda::ring_accumulate");
}

void to_bf16(const float* in, uint16_t* out, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  to_bf16_kernel<<<grid_for(n), kThreads, 0, stream>>>(in, out, n);
  check_launch("cuda::to_bf16");
}

void sum_members(const float* all, int p, float* out, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  sum_members_kernel<float><<<grid_for(n), kThreads, 0, stream>>>(all, p, out, n);
  check_launch("cuda::sum_members");
}

void sum_members(const double* all, int p, double* out, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  sum_members_kernel<double><<<grid_for(n), kThreads, 0, stream>>>(all, p, out, n);
  check_launch("cuda::sum_members");
}

}  // namespace zeropp::cuda
