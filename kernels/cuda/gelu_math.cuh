// GELU's tanh approximation and its slope at one point on the device, shared
// by gelu.cu and the fused bias_gelu.cu (kernels/ops/gelu_math.hpp is the host's):
// the host's formula and constants (rounded from the same doubles), with
// tanh(u) = 1 - 2/(exp(2u)+1) through CUDA's expf where the host uses its
// polynomial exponential (kernels/ops/fast_exp.hpp): the two agree to relative
// 1e-5, absolute 4e-6 where 1 + tanh cancels.
#pragma once

#include <cuda_runtime.h>

namespace zeropp::cuda::detail {

constexpr float kGeluSqrt2OverPi = float(0.79788456080286535588);
constexpr float kGeluCubic = float(0.044715);
constexpr float kGeluCubic3 = float(3 * 0.044715);

__device__ __forceinline__ float gelu_tanh(float u) { return 1.0f - 2.0f / (expf(2.0f * u) + 1.0f); }

__device__ __forceinline__ float gelu_value(float x) {
  const float u = kGeluSqrt2OverPi * (x + kGeluCubic * x * x * x);
  return 0.5f * x * (1.0f + gelu_tanh(u));
}

__device__ __forceinline__ float gelu_slope(float x) {
  const float u = kGeluSqrt2OverPi * (x + kGeluCubic * x * x * x);
  const float th = gelu_tanh(u);
  const float du = kGeluSqrt2OverPi * (1.0f + kGeluCubic3 * x * x);
  return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du;
}

}  // namespace zeropp::cuda::detail
