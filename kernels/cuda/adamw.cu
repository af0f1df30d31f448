// AdamW on the GPU (kernels/ops/adamw.hpp is the contract): one thread per
// parameter, the host kernel's expression term by term, with the bias
// corrections 1/(1 - beta^step) computed once on the host by the same
// expression. IEEE division and square root (nvcc's default) and no FMA
// contraction (--fmad=false, cmake/ZeroppCuda.cmake): param, m and v are bit
// for bit the host's. Which parameters decay, and their segments, is the
// caller's (src/zero/optimizer.cpp calls this per segment, as the host one).
#include <cmath>

#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

void adamw_update(float* param, float* m, float* v, const float* grad, int64_t n, float lr, float beta1,
                  float beta2, float eps, float weight_decay, int step, float grad_scale,
                  cudaStream_t stream) {
  const float c1 = 1.0f / (1.0f - std::pow(beta1, float(step)));
  const float c2 = 1.0f / (1.0f - std::pow(beta2, float(step)));
  detail::for_each_index(n, stream, [=] __device__(int64_t i) {
    const float gi = grad[i] * grad_scale;
    const float mi = beta1 * m[i] + (1.0f - beta1) * gi;
    const float vi = beta2 * v[i] + (1.0f - beta2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    param[i] -= lr * (mi * c1 / (sqrtf(vi * c2) + eps) + weight_decay * param[i]);
  });
}

}  // namespace zeropp::cuda
