// One kernel body, compiled for AVX-512, AVX2 + FMA and the baseline, and run
// in the widest one simd_isa() allows (kernels/runtime/cpu_features.hpp).
//
// A kernel is a struct K with `static ZEROPP_SIMD_INLINE R run(args...)`:
// simd_dispatch<K>(args...) calls it through one of three wrappers that carry
// the target attribute. run and everything it calls must be inlined into the
// wrapper (always-inline helpers, plain loops over raw pointers): the
// wrapper's target applies to its own body only, so a Kokkos::parallel_for
// lambda or any other out-of-line call would still run the baseline code.
// With FMA available GCC would contract a*b+c (the baseline has no FMA);
// zeropp_kernels is compiled with -ffp-contract=off, so every operation is
// rounded as written and the paths agree bit for bit (as do the CUDA twins,
// built with --fmad=false). The lane sums (kernels/ops/lane_sum.hpp) add in the
// same order on every path.
#pragma once

#include "kernels/runtime/cpu_features.hpp"

#define ZEROPP_SIMD_INLINE inline __attribute__((always_inline))
// After a lambda's parameter list: [..](int64_t i) ZEROPP_SIMD_INLINE_LAMBDA { .. }
#define ZEROPP_SIMD_INLINE_LAMBDA __attribute__((always_inline))

namespace zeropp {

#if defined(__x86_64__) && defined(__GNUC__)
template <class K, class... A>
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,prefer-vector-width=512"))) auto
simd_avx512(A... a) {
  return K::run(a...);
}
template <class K, class... A>
__attribute__((target("avx2,fma"))) auto simd_avx2(A... a) {
  return K::run(a...);
}
#endif
template <class K, class... A>
auto simd_baseline(A... a) {
  return K::run(a...);
}

template <class K, class... A>
auto simd_dispatch(A... a) {
#if defined(__x86_64__) && defined(__GNUC__)
  switch (simd_isa()) {
    case SimdIsa::avx512:
      return simd_avx512<K>(a...);
    case SimdIsa::avx2:
      return simd_avx2<K>(a...);
    case SimdIsa::baseline:
      break;
  }
#endif
  return simd_baseline<K>(a...);
}

}  // namespace zeropp
