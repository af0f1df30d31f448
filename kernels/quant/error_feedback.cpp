#include "kernels/quant/error_feedback.hpp"

#include "kernels/runtime/device_context.hpp"

#ifdef ZEROPP_HAVE_CUDA
#include "kernels/cuda/ops.hpp"
#endif

namespace zeropp {

void add_error(Vec<float> x, CVec<float> e, int64_t n) {
  ZEROPP_ON_DEVICE(float, "add_error", cuda::add_error(x.data(), e.data(), n, ZD->stream));
  float* px = x.data();
  const float* pe = e.data();
  Kokkos::parallel_for(
      "add_error", Range(0, n), KOKKOS_LAMBDA(const int64_t i) { px[i] += pe[i]; });
}

void update_error(Vec<float> e, CVec<float> x, CVec<float> deq, float beta, int64_t n) {
  ZEROPP_ON_DEVICE(float, "update_error",
                   cuda::update_error(e.data(), x.data(), deq.data(), beta, n, ZD->stream));
  float* pe = e.data();
  const float* px = x.data();
  const float* pd = deq.data();
  Kokkos::parallel_for(
      "update_error", Range(0, n),
      KOKKOS_LAMBDA(const int64_t i) { pe[i] = beta * pe[i] + (1.0f - beta) * (px[i] - pd[i]); });
}

}  // namespace zeropp
