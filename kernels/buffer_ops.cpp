#include "kernels/buffer_ops.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/kernel_hooks.hpp"

namespace zeropp {

// Kokkos::deep_copy fills element by element in baseline code; clearing
// gradients and scratch every step (~14 MB a layer of `tiny`) is a memset.
template <class T>
void fill(Vec<T> x, T v) {
  const KernelScope scope;  // device-buffer access, as around a Kokkos kernel
  const T zero{};
  if (std::memcmp(&v, &zero, sizeof v) == 0)  // all bits zero (not -0.0)
    std::memset(x.data(), 0, sizeof(T) * x.size());
  else
    std::fill_n(x.data(), x.size(), v);
}

template <class T>
void copy(Vec<T> dst, CVec<T> src) {
  Kokkos::deep_copy(dst, src);
}

template <class T>
void scale(Vec<T> x, T a) {
  Kokkos::parallel_for(
      "buffer_scale", Range(0, int64_t(x.size())), KOKKOS_LAMBDA(int64_t i) { x(i) *= a; });
}

template <class T>
double sum(CVec<T> x) {
  double s = 0;
  Kokkos::parallel_reduce(
      "buffer_sum", Range(0, int64_t(x.size())),
      KOKKOS_LAMBDA(int64_t i, double& acc) { acc += double(x(i)); }, s);
  return s;
}

template <class T>
double dot(CVec<T> w, CVec<T> x) {
  double s = 0;
  Kokkos::parallel_reduce(
      "buffer_dot", Range(0, int64_t(x.size())),
      KOKKOS_LAMBDA(int64_t i, double& acc) { acc += double(w(i)) * double(x(i)); }, s);
  return s;
}

template void fill<float>(Vec<float>, float);
template void fill<double>(Vec<double>, double);
template void fill<int32_t>(Vec<int32_t>, int32_t);
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

}  // namespace zeropp
