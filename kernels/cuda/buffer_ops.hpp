// The buffer operations of kernels/ops/buffer_ops.hpp on the GPU, on raw device
// pointers and the stream last (kernels/ops/buffer_ops.cpp dispatches to them with
// a device context installed). fill, copy, scale, axpy and copy_rows are
// asynchronous on
// `stream` and bit for bit the host's; sum and dot wait for `stream` and
// return the value (kernels/cuda/reduce_sum.cuh: double accumulation in a
// fixed tree order, so within double rounding of the host's sequential sum).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace zeropp::cuda {

// x[i] = v; T is float, int32_t or uint8_t (what the engine and the models keep on the device).
template <class T>
void fill(T* x, T v, int64_t n, cudaStream_t stream = nullptr);
// dst = src, `bytes` bytes, device to device (the ranges do not overlap).
void copy(void* dst, const void* src, int64_t bytes, cudaStream_t stream = nullptr);
// x[i] *= a.
void scale(float* x, float a, int64_t n, cudaStream_t stream = nullptr);
// sum_i x[i] and sum_i w[i]·x[i], in double.
double sum(const float* x, int64_t n, cudaStream_t stream = nullptr);
double dot(const float* w, const float* x, int64_t n, cudaStream_t stream = nullptr);
// y[i] += a·x[i].
void axpy(float* y, const float* x, float a, int64_t n, cudaStream_t stream = nullptr);
// `rows` rows of `width` elements between strided device ranges (cudaMemcpy2DAsync).
void copy_rows(float* dst, int64_t dst_stride, const float* src, int64_t src_stride, int64_t rows,
               int64_t width, cudaStream_t stream = nullptr);

}  // namespace zeropp::cuda
