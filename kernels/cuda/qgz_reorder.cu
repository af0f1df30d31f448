// qgZ step 1's reorder on the GPU (kernels/quant/qgz_reorder.hpp is the contract):
// one thread per output element, a plain copy, so bit for bit the host's.
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/quantize.cuh"

namespace zeropp::cuda {

void qgz_reorder(const float* grad, float* out, int64_t n, int X, int Y, cudaStream_t stream) {
  const int64_t s = n / (int64_t(X) * Y), chunk = int64_t(Y) * s;
  // out[x·Y·s + y·s + i] = grad[(y·X + x)·s + i]
  detail::for_each_index(n, stream, [=] __device__(int64_t pos) {
    const int64_t x = pos / chunk, rem = pos - x * chunk, y = rem / s;
    out[pos] = grad[(y * X + x) * s + (rem - y * s)];
  });
}

}  // namespace zeropp::cuda
