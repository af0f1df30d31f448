// GELU's backward with the bias gradient on the GPU (kernels/ops/bias_gelu.hpp is
// the contract): each element's g = dout * gelu'(pre) goes to dpre (+= g, or
// = g with GradMode::Overwrite, never read) and into the column sums of
// column_sum.cuh (two-level, deterministic), added to dbias. dpre agrees
// within gelu_math.cuh's tolerance; dbias sums N such terms, so within
// relative 1e-5 plus absolute 1e-4 at the model's N (a few thousand rows).
#include "kernels/cuda/column_sum.cuh"
#include "kernels/cuda/gelu_math.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

void bias_gelu_backward(float* dpre, float* dbias, const float* pre, const float* dout, int N, int OC,
                        GradMode dpre_mode, cudaStream_t stream) {
  const bool overwrite = dpre_mode == GradMode::Overwrite;
  const auto term = [=] __device__(int64_t n, int c, float* v) {
    const int64_t i = n * OC + c;
    const float g = dout[i] * detail::gelu_slope(pre[i]);
    dpre[i] = overwrite ? g : dpre[i] + g;
    v[0] = g;
  };
  detail::column_sums<1>(N, OC, term, {{dbias}}, stream);
}

}  // namespace zeropp::cuda
