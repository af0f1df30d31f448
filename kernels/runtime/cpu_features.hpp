// What the CPU running the kernels can do.
//
// The quantization kernels: on x86-64 their loops are built for x86-64-v2 at
// the least (kernels/quant/quant_isa_sse4.cpp: SSE4.1/4.2), with AVX2 and AVX-512
// copies chosen at load time (kernels/quant/quant_isa.hpp). Every x86-64 CPU since
// about 2009 has x86-64-v2; on one without it the kernels would die with
// SIGILL, so they call require_quant_isa first, which is compiled for the
// baseline and throws a clear error instead. Elsewhere it does nothing.
//
// The elementwise model kernels (kernels/runtime/simd_dispatch.hpp): the build has no
// -march, so each hot kernel is compiled three times (AVX-512, AVX2 + FMA,
// the baseline) and simd_isa() picks one from the CPU's feature flags, never
// from a CPU name. ZEROPP_MAX_CPU_ISA=avx2|baseline caps the choice of both
// kinds of kernels (tests run every path on one machine that way); it never
// selects what the CPU lacks.
#pragma once

namespace zeropp {

// Throws std::runtime_error naming `who` and the missing instruction set.
void require_quant_isa(const char* who);

enum class SimdIsa { baseline = 0, avx2 = 1, avx512 = 2 };

// The widest instruction set of the three that this CPU (and its OS) runs.
SimdIsa cpu_simd_isa();
// cpu capped by `cap` (ZEROPP_MAX_CPU_ISA's value; null or empty: no cap).
// Throws std::runtime_error naming the variable and its value when that is
// not one of avx512, avx2, baseline.
SimdIsa cap_simd_isa(const char* cap, SimdIsa cpu);
// cap_simd_isa(ZEROPP_MAX_CPU_ISA, cpu_simd_isa()), decided on the first call.
SimdIsa simd_isa();
const char* simd_isa_name(SimdIsa isa);

}  // namespace zeropp
