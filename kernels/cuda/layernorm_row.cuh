// One row of LayerNorm's forward by one warp, shared by layernorm.cu and the
// layernorm_seed.cu (kernels/ops/layernorm_row.hpp is the host's): the
// lanes stride over the C channels, the row sum and then the centred sum of
// squares are reduced over the warp (two passes, as on the host, for
// accuracy), every lane writes its channels, lane 0 the statistics. The sums
// are tree-ordered, so mean, rstd and out agree with the host's sequential
// sums to a few ulp (relative 1e-5 on out for C = 768), not bit for bit.
#pragma once

#include "kernels/cuda/launch.cuh"

namespace zeropp::cuda::detail {

constexpr float kLayerNormEps = float(1e-5);

// Every lane of the warp calls it (the shuffles are full-warp).
__device__ __forceinline__ void layernorm_row_warp(float* out, float* mean, float* rstd, const float* x,
                                                   const float* weight, const float* bias, int C) {
  const int lane = threadIdx.x & 31;
  float sum = 0.0f;
  for (int c = lane; c < C; c += 32) sum += x[c];
  const float m = warp_sum(sum) / C;
  float ss = 0.0f;
  for (int c = lane; c < C; c += 32) ss += (x[c] - m) * (x[c] - m);
  const float s = 1.0f / sqrtf(warp_sum(ss) / C + kLayerNormEps);
  for (int c = lane; c < C; c += 32) out[c] = (x[c] - m) * s * weight[c] + bias[c];
  if (lane == 0) {
    *mean = m;
    *rstd = s;
  }
}

}  // namespace zeropp::cuda::detail
