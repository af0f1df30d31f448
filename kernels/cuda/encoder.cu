// Token + position embedding on the GPU (kernels/encoder.hpp is the contract).
//
// Forward: one thread per output element, out[bt,c] = wte[tok[bt],c] + wpe[t,c]
// (or the token row alone without wpe); bit for bit the host's.
//
// Backward without atomics, in the host's order, so bit for bit the host's and
// deterministic: dwpe by one thread per (t, c) adding dout[b,t,c] for b = 0..B-1;
// dwte by one thread per column c walking all B*Tn rows in order (rows sharing a
// token add into the same dwte row, which is why the columns, not the rows, are
// split). That second kernel has only C threads: correct but slow at large B*Tn;
// a bucketed scatter (rows grouped by token, then summed in row order) is the
// faster equivalent left for the device-resident engine's profiling.
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

void encoder_forward(float* out, const int32_t* tokens, const float* wte, const float* wpe, int B, int Tn,
                     int C, cudaStream_t stream) {
  detail::for_each_index(int64_t(B) * Tn * C, stream, [=] __device__(int64_t i) {
    const int64_t bt = i / C, c = i % C;
    const float e = wte[int64_t(tokens[bt]) * C + c];
    out[i] = wpe ? e + wpe[(bt % Tn) * C + c] : e;
  });
}

void encoder_backward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int B, int Tn,
                      int C, cudaStream_t stream) {
  if (dwpe)
    detail::for_each_index(int64_t(Tn) * C, stream, [=] __device__(int64_t i) {
      float acc = dwpe[i];
      for (int b = 0; b < B; ++b) acc += dout[int64_t(b) * Tn * C + i];
      dwpe[i] = acc;
    });
  const int64_t BT = int64_t(B) * Tn;
  detail::for_each_index(C, stream, [=] __device__(int64_t c) {
    for (int64_t bt = 0; bt < BT; ++bt) dwte[int64_t(tokens[bt]) * C + c] += dout[bt * C + c];
  });
}

}  // namespace zeropp::cuda
