// One row of LayerNorm's forward (layernorm.hpp has the formulas), shared by
// layernorm_forward and layernorm_seed_forward: out = (x - mean)
// * rstd * w + b over C values, two passes for the statistics (mean, then the
// centred sum of squares, both in lanes: kernels/ops/lane_sum.hpp); mean and rstd
// returned. Always inlined into the kernel's per-ISA body (kernels/runtime/simd_dispatch.hpp).
#pragma once

#include <cmath>

#include "kernels/ops/lane_sum.hpp"
#include "kernels/runtime/common.hpp"

namespace zeropp {

constexpr double kLayerNormEps = 1e-5;  // PyTorch's default

template <class T>
struct RowStats {
  T mean, rstd;
};

template <class T>
KOKKOS_FORCEINLINE_FUNCTION RowStats<T> layernorm_row(const T* x, T* out, const T* w, const T* b, int C) {
  const T m = lane_sum<T>(C, [x](int64_t c) ZEROPP_SIMD_INLINE_LAMBDA { return x[c]; }) / C;
  const T ss =
      lane_sum<T>(C, [x, m](int64_t c) ZEROPP_SIMD_INLINE_LAMBDA { return (x[c] - m) * (x[c] - m); });
  const T s = T(1) / std::sqrt(ss / C + T(kLayerNormEps));
  for (int c = 0; c < C; ++c) out[c] = (x[c] - m) * s * w[c] + b[c];
  return {m, s};
}

}  // namespace zeropp
