// Which BLAS kernels run, and whether they fit the CPU.
//
// OpenBLAS built with DYNAMIC_ARCH picks its kernels from the CPU's model
// number; 0.3.21 does not know Sapphire/Emerald Rapids and silently falls
// back to its generic Prescott (SSE3) kernels, ~5x slower GEMMs than its
// SkylakeX ones on the same core (docs/performance.md). The zeropp binary then
// re-executes itself once with OPENBLAS_CORETYPE chosen from the CPU's feature
// flags (src/run/blas_kernels.hpp); the warning below covers a user's setting
// that still runs generic kernels.
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

// The OPENBLAS_CORETYPE this CPU should run when `core` is one of OpenBLAS's
// pre-AVX2 kernel sets although the CPU has AVX2 + FMA ("Haswell") or AVX-512
// ("SkylakeX"); "" otherwise (also for kernel names it does not know). Goes by
// feature flags, never the model number, so it never names kernels the CPU
// cannot run.
std::string blas_better_coretype(const std::string& core, CpuVectorFeatures cpu);

// A one-line warning when blas_better_coretype is not "", naming the setting;
// "" otherwise.
std::string blas_core_warning(const std::string& core, CpuVectorFeatures cpu);

// blas_core_warning for this library on this CPU.
std::string blas_core_warning();

}  // namespace zeropp
