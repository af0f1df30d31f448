// Fused softmax + cross-entropy on the GPU (kernels/ops/crossentropy.hpp is the
// contract).
//
// Forward: one block of 256 threads per row of V logits. The target's logit is
// read first (probs may alias logits); the row maximum and then the sum of
// exp(logit - max) are reduced over the block (a fixed tree: deterministic);
// each thread then overwrites its own elements with exp(logit - max) / sum,
// having read them itself, so the in-place case is race-free. The loss is
// log(sum) - (target logit - max), as on the host. The host evaluates exp by
// its own polynomial (within 1.4 ulp), CUDA by expf (within 2 ulp), and the
// sums are ordered differently: probabilities and losses agree to relative
// 1e-5 (absolute 1e-9 for probabilities that small), not bit for bit.
//
// Backward: one thread per element, dlogits (+)= dloss * probs, minus dloss at
// the target: the host's two roundings in the host's order, so bit for bit
// the host's; "=" instead of "+=" when dlogits aliases probs, as there.
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

namespace {

__global__ void __launch_bounds__(detail::kThreads)
    softmax_crossentropy_forward_kernel(float* probs, float* losses, const float* logits,
                                        const int32_t* targets, int V) {
  __shared__ float scratch[32];
  const int64_t n = blockIdx.x;
  const float* l = logits + n * V;
  float* p = probs + n * V;
  const float target_logit = targets ? l[targets[n]] : 0.0f;  // before any thread overwrites the row
  float maxv = -INFINITY;
  for (int i = threadIdx.x; i < V; i += blockDim.x) maxv = fmaxf(maxv, l[i]);
  maxv = detail::block_reduce<true>(maxv, scratch);
  float sum = 0.0f;
  for (int i = threadIdx.x; i < V; i += blockDim.x) sum += expf(l[i] - maxv);
  sum = detail::block_reduce<false>(sum, scratch);
  const float inv = 1.0f / sum;
  for (int i = threadIdx.x; i < V; i += blockDim.x) p[i] = expf(l[i] - maxv) * inv;
  if (targets && threadIdx.x == 0) losses[n] = logf(sum) - (target_logit - maxv);
}

}  // namespace

void softmax_crossentropy_forward(float* probs, float* losses, const float* logits, const int32_t* targets,
                                  int N, int V, cudaStream_t stream) {
  if (N <= 0) return;
  softmax_crossentropy_forward_kernel<<<unsigned(N), detail::kThreads, 0, stream>>>(probs, losses, logits,
                                                                                    targets, V);
  ZCHECK_CUDA(cudaGetLastError());
}

void softmax_crossentropy_backward(float* dlogits, const float* probs, const int32_t* targets, float dloss,
                                   int N, int V, cudaStream_t stream) {
  const bool in_place = dlogits == probs;
  detail::for_each_index(int64_t(N) * V, stream, [=] __device__(int64_t i) {
    const int64_t n = i / V;
    float g = in_place ? dloss * probs[i] : dlogits[i] + dloss * probs[i];
    if (i - n * V == targets[n]) g -= dloss;
    dlogits[i] = g;
  });
}

}  // namespace zeropp::cuda
