// fp32 <-> bf16 over n elements on the GPU (kernels/ops/convert.hpp is the
// contract): one thread per element on the integer bits (bf16.cuh), so every
// value, NaN, infinity and denormal included, converts to the host's bits.
// to_bf16 itself is the collectives' (kernels/cuda/comm_kernels.cuh), on the
// same bit function; from_bf16 widens exactly; round_to_bf16 is the round
// trip, copying or in place.
#include "kernels/cuda/bf16.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

void from_bf16(const uint16_t* in, float* out, int64_t n, cudaStream_t stream) {
  detail::for_each_index(n, stream, [=] __device__(int64_t i) { out[i] = detail::bf16_bits_to_fp32(in[i]); });
}

void round_to_bf16(const float* in, float* out, int64_t n, cudaStream_t stream) {
  detail::for_each_index(n, stream, [=] __device__(int64_t i) {
    out[i] = detail::bf16_bits_to_fp32(detail::fp32_to_bf16_bits(in[i]));
  });
}

}  // namespace zeropp::cuda
