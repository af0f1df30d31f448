// One row of LayerNorm's forward (layernorm.hpp has the formulas), shared by
// layernorm_forward and the fused residual_layernorm_forward: out = (x - mean)
// * rstd * w + b over C values, two passes for the statistics (mean, then the
// centred sum of squares); mean and rstd returned.
#pragma once

#include "kernels/common.hpp"

namespace zeropp {

constexpr double kLayerNormEps = 1e-5;  // PyTorch's default

template <class T>
struct RowStats {
  T mean, rstd;
};

template <class T>
KOKKOS_INLINE_FUNCTION RowStats<T> layernorm_row(const T* x, T* out, const T* w, const T* b, int C) {
  T sum = 0;
  for (int c = 0; c < C; ++c) sum += x[c];
  const T m = sum / C;
  T ss = 0;
  for (int c = 0; c < C; ++c) ss += (x[c] - m) * (x[c] - m);
  const T s = T(1) / Kokkos::Experimental::sqrt(ss / C + T(kLayerNormEps));
  for (int c = 0; c < C; ++c) out[c] = (x[c] - m) * s * w[c] + b[c];
  return {m, s};
}

}  // namespace zeropp
