// Residual connection on the GPU (kernels/ops/residual.hpp is the contract): one
// thread per element, out = a + b (out may
// alias a or b: each thread reads its element before writing it), backward
// da += dout, db += dout. Bit for bit the host's.
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

void residual_forward(float* out, const float* a, const float* b, int64_t n, cudaStream_t stream) {
  detail::for_each_index(n, stream, [=] __device__(int64_t i) { out[i] = a[i] + b[i]; });
}

void residual_backward(float* da, float* db, const float* dout, int64_t n, cudaStream_t stream) {
  detail::for_each_index(n, stream, [=] __device__(int64_t i) {
    da[i] += dout[i];
    db[i] += dout[i];
  });
}

}  // namespace zeropp::cuda
