#include "kernels/qgz_reorder.hpp"

#include <stdexcept>

namespace zeropp {

void qgz_reorder(CVec<float> grad, Vec<float> out, int64_t n, int X, int Y) {
  if (X < 1 || Y < 1 || n % (int64_t(X) * Y) != 0)
    throw std::invalid_argument("qgz_reorder: n must be a multiple of X*Y");
  const int64_t s = n / (int64_t(X) * Y), chunk = int64_t(Y) * s;
  const float* g = grad.data();
  float* o = out.data();
  Kokkos::parallel_for(
      "qgz_reorder", Range(0, n), KOKKOS_LAMBDA(const int64_t j) {
        const int64_t x = j / chunk, y = j % chunk / s, i = j % s;
        o[j] = g[(y * X + x) * s + i];
      });
}

}  // namespace zeropp
