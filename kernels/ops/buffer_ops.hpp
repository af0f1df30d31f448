// The plain operations on whole buffers that the engine and the models need
// between their kernels: fill, copy, scale, sum, weighted sum, y += a·x and
// a copy of strided rows. They are
// kernels like any other (they run inside a kernel scope, and on the device's
// stream when a device context is installed: kernels/runtime/device_context.hpp), so
// that code above kernels/ never touches buffer memory itself.
#pragma once

#include <cstdint>

#include "kernels/runtime/common.hpp"

namespace zeropp {

// x[i] = v.
template <class T>
void fill(Vec<T> x, T v);

// dst[i] = src[i] (same size; the ranges do not overlap).
template <class T>
void copy(Vec<T> dst, CVec<T> src);

// x[i] *= a.
template <class T>
void scale(Vec<T> x, T a);

// sum_i x[i] in double (a value the host needs: waits for the device).
template <class T>
double sum(CVec<T> x);

// sum_i w[i]·x[i] in double (same size).
template <class T>
double dot(CVec<T> w, CVec<T> x);

// y[i] += a·x[i] (same size).
template <class T>
void axpy(Vec<T> y, CVec<T> x, T a);

// Rows of `width` elements: dst[r·dst_stride + i] = src[r·src_stride + i]
// for r < rows, i < width (the rows do not overlap). The views start at the
// first row and span at least (rows - 1)·stride + width elements.
template <class T>
void copy_rows(Vec<T> dst, int64_t dst_stride, CVec<T> src, int64_t src_stride, int64_t rows, int64_t width);

}  // namespace zeropp
