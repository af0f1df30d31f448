// The buffer operations on the GPU (kernels/cuda/buffer_ops.hpp): elementwise
// launches, device-to-device cudaMemcpyAsync / cudaMemcpy2DAsync, and reduce_sum for the two
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

void axpy(float* y, const float* x, float a, int64_t n, cudaStream_t stream) {
  detail::for_each_index(n, stream, [=] __device__(int64_t i) { y[i] += a * x[i]; });
}

void copy_rows(float* dst, int64_t dst_stride, const float* src, int64_t src_stride, int64_t rows,
               int64_t width, cudaStream_t stream) {
  if (rows == 0 || width == 0) return;
  // One row's strides are not used (the host's contract); CUDA wants pitches of at least the width.
  const size_t f = sizeof(float), dpitch = size_t(rows == 1 ? width : dst_stride) * f,
               spitch = size_t(rows == 1 ? width : src_stride) * f;
  ZCHECK_CUDA(cudaMemcpy2DAsync(dst, dpitch, src, spitch, size_t(width) * f, size_t(rows),
                                cudaMemcpyDeviceToDevice, stream));
}

double sum(const float* x, int64_t n, cudaStream_t stream) {
  return detail::reduce_sum(n, stream, [=] __device__(int64_t i) { return double(x[i]); });
}

double dot(const float* w, const float* x, int64_t n, cudaStream_t stream) {
  return detail::reduce_sum(n, stream, [=] __device__(int64_t i) { return double(w[i]) * double(x[i]); });
}

}  // namespace zeropp::cuda
