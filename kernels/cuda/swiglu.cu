// SwiGLU on the GPU (kernels/ops/swiglu.hpp is the contract): one thread per
// output element, the host kernel's expressions with CUDA's expf (an ulp or
// two from glibc's): relative 1e-5 agreement (absolute 1e-5 where 1 - sigmoid cancels).
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

void swiglu_forward(float* out, const float* inp, int64_t N, int F, cudaStream_t stream) {
  detail::for_each_index(N * F, stream, [=] __device__(int64_t i) {
    const int64_t n = i / F, f = i % F;
    const float a = inp[n * 2 * F + f], b = inp[n * 2 * F + F + f];
    out[i] = a / (1.0f + expf(-a)) * b;
  });
}

void swiglu_backward(float* dinp, const float* inp, const float* dout, int64_t N, int F, GradMode dinp_mode,
                     cudaStream_t stream) {
  const bool acc = dinp_mode == GradMode::Accumulate;
  detail::for_each_index(N * F, stream, [=] __device__(int64_t i) {
    const int64_t n = i / F, f = i % F;
    const float a = inp[n * 2 * F + f], b = inp[n * 2 * F + F + f];
    const float s = 1.0f / (1.0f + expf(-a));
    const float da = dout[i] * b * s * (1.0f + a * (1.0f - s)), db = dout[i] * a * s;
    float* dx = dinp + n * 2 * F;
    dx[f] = acc ? dx[f] + da : da;
    dx[F + f] = acc ? dx[F + f] + db : db;
  });
}

}  // namespace zeropp::cuda
