// Which BLAS kernels run, and whether they fit the CPU.
//
// OpenBLAS built with DYNAMIC_ARCH picks its kernels from the CPU's model
// number; 0.3.21 does not know Sapphire/Emerald Rapids and silently falls
// back to its generic Prescott (SSE3) kernels, ~5x slower GEMMs than its
// SkylakeX ones on the same core (docs/performance.md). scripts/openblas-coretype
// sets OPENBLAS_CORETYPE from the CPU's feature flags; this is the check at
// start-up that it worked.
#pragma once

#include <string>

namespace zeropp {

// The library and its version: "OpenBLAS 0.3.21", "BLIS 0.9.0", "CBLAS".
std::string blas_library();

// The kernels the BLAS library chose ("SkylakeX", "Prescott", BLIS's
// "skx", ...), or "" when the library does not say.
std::string blas_core_name();

struct CpuVectorFeatures {
  // What OpenBLAS's Haswell (AVX2 + FMA) and SkylakeX (AVX-512 F, CD, BW, VL,
  // DQ) kernels need, as scripts/openblas-coretype checks it.
  bool avx2 = false, avx512 = false;
};
CpuVectorFeatures cpu_vector_features();

// A one-line warning when `core` is one of OpenBLAS's pre-AVX2 kernel sets
// although the CPU has AVX2 or AVX-512, naming the OPENBLAS_CORETYPE to set;
// "" otherwise (also for names it does not know).
std::string blas_core_warning(const std::string& core, CpuVectorFeatures cpu);

// blas_core_warning for this library on this CPU.
std::string blas_core_warning();

}  // namespace zeropp
