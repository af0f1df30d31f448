#include "kernels/qgz_reorder.hpp"

#include <stdexcept>

namespace zeropp {

void qgz_reorder(CVec<float> grad, Vec<float> out, int64_t n, int X, int Y) {
  if (X < 1 || Y < 1 || n % (int64_t(X) * Y) != 0)
    throw std::invalid_argument("qgz_reorder: n must be a multiple of X*Y");
  const int64_t s = n / (int64_t(X) * Y);
  const float* g = grad.data();
  float* o = out.data();
  // One contiguous copy of s elements per slice: per-element index arithmetic
  // (three 64-bit divisions) made this cost more than the GEMMs of a small step.
  Kokkos::parallel_for(
      "qgz_reorder", Range(0, int64_t(X) * Y), KOKKOS_LAMBDA(const int64_t b) {
        const int64_t x = b / Y, y = b % Y;
        const float* src = g + (y * X + x) * s;
        float* dst = o + b * s;
        for (int64_t i = 0; i < s; ++i) dst[i] = src[i];
      });
}

}  // namespace zeropp
