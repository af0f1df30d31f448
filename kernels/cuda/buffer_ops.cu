// The buffer operations on the GPU (kernels/cuda/buffer_ops.hpp): elementwise
// launches, a device-to-device cudaMemcpyAsync, and reduce_sum for the two
// values the host needs.
#include "kernels/cuda/buffer_ops.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/reduce_sum.cuh"

namespace zeropp::cuda {

template <class T>
void fill(T* x, T v, int64_t n, cudaStream_t stream) {
  detail::for_each_index(n, stream, [=] __device__(int64_t i) { x[i] = v; });
}
template void fill<float>(float*, float, int64_t, cudaStream_t);
template void fill<int32_t>(int32_t*, int32_t, int64_t, cudaStream_t);
template void fill<uint8_t>(uint8_t*, uint8_t, int64_t, cudaStream_t);

void copy(void* dst, const void* src, int64_t bytes, cudaStream_t stream) {
  if (bytes > 0) ZCHECK_CUDA(cudaMemcpyAsync(dst, src, size_t(bytes), cudaMemcpyDeviceToDevice, stream));
}

void scale(float* x, float a, int64_t n, cudaStream_t stream) {
  detail::for_each_index(n, stream, [=] __device__(int64_t i) { x[i] *= a; });
}

double sum(const float* x, int64_t n, cudaStream_t stream) {
  return detail::reduce_sum(n, stream, [=] __device__(int64_t i) { return double(x[i]); });
}

double dot(const float* w, const float* x, int64_t n, cudaStream_t stream) {
  return detail::reduce_sum(n, stream, [=] __device__(int64_t i) { return double(w[i]) * double(x[i]); });
}

}  // namespace zeropp::cuda
