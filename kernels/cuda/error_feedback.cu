// qgZ's error feedback on the GPU (kernels/quant/error_feedback.hpp is the
// contract): one thread per element, the host's expressions in the host's
// order without FMA contraction (--fmad=false), so bit for bit the host's.
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

void add_error(float* x, const float* e, int64_t n, cudaStream_t stream) {
  detail::for_each_index(n, stream, [=] __device__(int64_t i) { x[i] += e[i]; });
}

void update_error(float* e, const float* x, const float* deq, float beta, int64_t n, cudaStream_t stream) {
  detail::for_each_index(n, stream,
                         [=] __device__(int64_t i) { e[i] = beta * e[i] + (1.0f - beta) * (x[i] - deq[i]); });
}

}  // namespace zeropp::cuda
