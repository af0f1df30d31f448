// One row of a residual add with an optional bias on its second branch, shared
// by residual_forward, bias_residual_forward and residual_layernorm_forward:
// out[c] = a[c] + (b[c] + bias[c]), or a[c] + b[c] when bias is null. The bias
// joins b first: b is a projection's x·W, so b + bias is that linear layer's
// output, as matmul_forward with the bias would give it (up to the GEMM's own
// order), before the residual stream adds it. out may alias a or b. Always
// inlined into the kernel's per-ISA body (kernels/simd_dispatch.hpp).
#pragma once

#include <cstdint>

#include "kernels/common.hpp"

namespace zeropp {

template <class T>
KOKKOS_FORCEINLINE_FUNCTION void residual_row(T* out, const T* a, const T* b, const T* bias, int64_t C) {
  if (bias)
    for (int64_t c = 0; c < C; ++c) out[c] = a[c] + (b[c] + bias[c]);
  else
    for (int64_t c = 0; c < C; ++c) out[c] = a[c] + b[c];
}

}  // namespace zeropp
