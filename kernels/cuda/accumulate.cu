// y[i] += x[i] * a on the GPU (kernels/ops/accumulate.hpp is the contract): one
// thread per element, a multiply then an add (no FMA: --fmad=false), so bit
// for bit the host's.
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

void accumulate_scaled(float* y, const float* x, float a, int64_t n, cudaStream_t stream) {
  detail::for_each_index(n, stream, [=] __device__(int64_t i) { y[i] += x[i] * a; });
}

}  // namespace zeropp::cuda
