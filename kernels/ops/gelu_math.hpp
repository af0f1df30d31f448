// GELU's tanh approximation and its derivative at one point (formulas in
// gelu.hpp), shared by gelu.cpp and the fused bias_gelu.cpp. tanh goes
// through fast_exp.hpp: glibc's tanhf is ~6x slower than its expf, expf does
// not vectorise, and GELU runs over [B,Tn,4C] every layer.
#pragma once

#include "kernels/ops/fast_exp.hpp"

namespace zeropp {

constexpr double kGeluSqrt2OverPi = 0.79788456080286535588;  // sqrt(2/pi)
constexpr double kGeluCubic = 0.044715;

template <class T>
KOKKOS_FORCEINLINE_FUNCTION T gelu_value(T x) {
  const T u = T(kGeluSqrt2OverPi) * (x + T(kGeluCubic) * x * x * x);
  return T(0.5) * x * (T(1) + tanh_vectorisable(u));
}

template <class T>
KOKKOS_FORCEINLINE_FUNCTION T gelu_slope(T x) {
  const T u = T(kGeluSqrt2OverPi) * (x + T(kGeluCubic) * x * x * x);
  const T th = tanh_vectorisable(u);
  const T du = T(kGeluSqrt2OverPi) * (T(1) + T(3 * kGeluCubic) * x * x);
  return T(0.5) * (T(1) + th) + T(0.5) * x * (T(1) - th * th) * du;
}

}  // namespace zeropp
