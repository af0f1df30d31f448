#include "kernels/ops/buffer_ops.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "kernels/runtime/device_context.hpp"
#include "kernels/runtime/kernel_hooks.hpp"
#include "src/base/errors.hpp"

#ifdef ZEROPP_HAVE_CUDA
#include "kernels/cuda/buffer_ops.hpp"
#endif

namespace zeropp {

// fill and copy run on the device for every element type but double (which
// never lives there: the host's gradient checks); scale, sum, dot, axpy and
// copy_rows are float's (ZEROPP_ON_DEVICE).
// On the host, Kokkos::deep_copy fills element by element in baseline code;
// clearing gradients and scratch every step (~14 MB a layer of `tiny`) is a memset.
template <class T>
void fill(Vec<T> x, T v) {
  ZEROPP_DEVICE_IF((!std::is_same_v<T, double>), "fill",
                   cuda::fill(x.data(), v, int64_t(x.size()), ZD->stream));
  if (x.size() == 0) return;  // an empty view may have no data (memset's pointer must not be null)
  const KernelScope scope;    // device-buffer access, as around a Kokkos kernel
  const T zero{};
  if (std::memcmp(&v, &zero, sizeof v) == 0)  // all bits zero (not -0.0)
    std::memset(x.data(), 0, sizeof(T) * x.size());
  else
    std::fill_n(x.data(), x.size(), v);
}

template <class T>
void copy(Vec<T> dst, CVec<T> src) {
  ZEROPP_DEVICE_IF((!std::is_same_v<T, double>), "copy",
                   cuda::copy(dst.data(), src.data(), int64_t(src.size() * sizeof(T)), ZD->stream));
  Kokkos::deep_copy(dst, src);
}

template <class T>
void scale(Vec<T> x, T a) {
  ZEROPP_ON_DEVICE(T, "scale", cuda::scale(x.data(), a, int64_t(x.size()), ZD->stream));
  Kokkos::parallel_for(
      "buffer_scale", Range(0, int64_t(x.size())), KOKKOS_LAMBDA(int64_t i) { x(i) *= a; });
}

template <class T>
double sum(CVec<T> x) {
  ZEROPP_ON_DEVICE(T, "sum", cuda::sum(x.data(), int64_t(x.size()), ZD->stream));
  double s = 0;
  Kokkos::parallel_reduce(
      "buffer_sum", Range(0, int64_t(x.size())),
      KOKKOS_LAMBDA(int64_t i, double& acc) { acc += double(x(i)); }, s);
  return s;
}

template <class T>
double dot(CVec<T> w, CVec<T> x) {
  ZEROPP_ON_DEVICE(T, "dot", cuda::dot(w.data(), x.data(), int64_t(x.size()), ZD->stream));
  double s = 0;
  Kokkos::parallel_reduce(
      "buffer_dot", Range(0, int64_t(x.size())),
      KOKKOS_LAMBDA(int64_t i, double& acc) { acc += double(w(i)) * double(x(i)); }, s);
  return s;
}

template <class T>
void axpy(Vec<T> y, CVec<T> x, T a) {
  if (y.size() != x.size())
    fatal("axpy", __FILE__, __LINE__,
          "y has " + std::to_string(y.size()) + " elements, x " + std::to_string(x.size()));
  ZEROPP_ON_DEVICE(T, "axpy", cuda::axpy(y.data(), x.data(), a, int64_t(y.size()), ZD->stream));
  Kokkos::parallel_for(
      "buffer_axpy", Range(0, int64_t(y.size())), KOKKOS_LAMBDA(int64_t i) { y(i) += a * x(i); });
}

template <class T>
void copy_rows(Vec<T> dst, int64_t dst_stride, CVec<T> src, int64_t src_stride, int64_t rows, int64_t width) {
  if (rows == 0) return;
  const auto span = [&](int64_t stride) { return (rows - 1) * stride + width; };
  if (int64_t(dst.size()) < span(dst_stride) || int64_t(src.size()) < span(src_stride))
    fatal("copy_rows", __FILE__, __LINE__,
          std::to_string(rows) + " rows of " + std::to_string(width) + " need " +
              std::to_string(span(dst_stride)) + " and " + std::to_string(span(src_stride)) +
              " elements; the views have " + std::to_string(dst.size()) + " and " +
              std::to_string(src.size()));
  ZEROPP_ON_DEVICE(T, "copy_rows",
                   cuda::copy_rows(dst.data(), dst_stride, src.data(), src_stride, rows, width, ZD->stream));
  Kokkos::parallel_for(
      "buffer_copy_rows", Range(0, rows * width), KOKKOS_LAMBDA(int64_t k) {
        const int64_t r = k / width, i = k % width;
        dst(r * dst_stride + i) = src(r * src_stride + i);
      });
}

template void fill<float>(Vec<float>, float);
template void fill<double>(Vec<double>, double);
template void fill<int32_t>(Vec<int32_t>, int32_t);
template void fill<uint8_t>(Vec<uint8_t>, uint8_t);
template void copy<float>(Vec<float>, CVec<float>);
template void copy<double>(Vec<double>, CVec<double>);
template void copy<int32_t>(Vec<int32_t>, CVec<int32_t>);
template void copy<uint8_t>(Vec<uint8_t>, CVec<uint8_t>);
template void scale<float>(Vec<float>, float);
template void scale<double>(Vec<double>, double);
template double sum<float>(CVec<float>);
template double sum<double>(CVec<double>);
template double dot<float>(CVec<float>, CVec<float>);
template double dot<double>(CVec<double>, CVec<double>);
template void axpy<float>(Vec<float>, CVec<float>, float);
template void axpy<double>(Vec<double>, CVec<double>, double);
template void copy_rows<float>(Vec<float>, int64_t, CVec<float>, int64_t, int64_t, int64_t);
template void copy_rows<double>(Vec<double>, int64_t, CVec<double>, int64_t, int64_t, int64_t);

}  // namespace zeropp
