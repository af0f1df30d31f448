// Sum of squares on the GPU (kernels/ops/sum_squares.hpp is the contract), for the
// gradient norm: exact float squares summed in double (kernels/cuda/reduce_sum.cuh),
// so it agrees with the host's sequential double sum to relative 1e-11.
#include "kernels/cuda/ops.hpp"
#include "kernels/cuda/reduce_sum.cuh"

namespace zeropp::cuda {

double sum_squares(const float* x, int64_t n, cudaStream_t stream) {
  return detail::reduce_sum(n, stream, [=] __device__(int64_t i) { return double(x[i]) * double(x[i]); });
}

}  // namespace zeropp::cuda
