#include "kernels/accumulate.hpp"

namespace zeropp {

void accumulate_scaled(Vec<float> y, CVec<float> x, float a, int64_t n) {
  float* py = y.data();
  const float* px = x.data();
  Kokkos::parallel_for(
      "accumulate_scaled", Range(0, n), KOKKOS_LAMBDA(const int64_t i) { py[i] += px[i] * a; });
}

}  // namespace zeropp
