// The plain operations on whole buffers that the engine and the models need
// between their kernels: fill, copy, scale, sum and weighted sum. They are
// kernels like any other (they run inside a kernel scope, and on the device's
// stream when a device context is installed: kernels/device_context.hpp), so
// that code above kernels/ never touches buffer memory itself.
#pragma once

#include <cstdint>

#include "kernels/common.hpp"

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

}  // namespace zeropp
