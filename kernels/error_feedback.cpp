#include "kernels/error_feedback.hpp"

namespace zeropp {

void add_error(Vec<float> x, CVec<float> e, int64_t n) {
  float* px = x.data();
  const float* pe = e.data();
  Kokkos::parallel_for(
      "add_error", Range(0, n), KOKKOS_LAMBDA(const int64_t i) { px[i] += pe[i]; });
}

void update_error(Vec<float> e, CVec<float> x, CVec<float> deq, float beta, int64_t n) {
  float* pe = e.data();
  const float* px = x.data();
  const float* pd = deq.data();
  Kokkos::parallel_for(
      "update_error", Range(0, n),
      KOKKOS_LAMBDA(const int64_t i) { pe[i] = beta * pe[i] + (1.0f - beta) * (px[i] - pd[i]); });
}

}  // namespace zeropp
