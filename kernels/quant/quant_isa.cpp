#include "kernels/quant/quant_isa.hpp"

#include "kernels/runtime/cpu_features.hpp"

namespace zeropp {

const QuantIsaKernels& quant_kernels_for(SimdIsa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
  // x86-64-v4: AVX-512 F, BW, CD, DQ, VL; v3: AVX2, FMA, BMI1/2 (what -march=x86-64-v3/v4 may use).
  if (isa == SimdIsa::avx512 && __builtin_cpu_supports("x86-64-v4")) return quant_kernels_avx512();
  if (isa >= SimdIsa::avx2 && __builtin_cpu_supports("x86-64-v3")) return quant_kernels_avx2();
#endif
  (void)isa;
  return quant_kernels_sse4();
}

const QuantIsaKernels& quant_kernels() {
  static const QuantIsaKernels& k = quant_kernels_for(simd_isa());
  return k;
}

}  // namespace zeropp
