#include "kernels/runtime/cpu_features.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace zeropp {

void require_quant_isa(const char* who) {
#if defined(__x86_64__) && defined(__GNUC__)
  // Compiled without -march: safe to run on any x86-64 CPU.
  static const bool ok = __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt");
  if (!ok)
    throw std::runtime_error(std::string(who) +
                             ": this build's quantization kernels need an x86-64-v2 CPU (SSE4.2, POPCNT); "
                             "this CPU lacks them");
#else
  (void)who;
#endif
}

}  // namespace zeropp

namespace zeropp {

SimdIsa cpu_simd_isa() {
#if defined(__x86_64__) && defined(__GNUC__)
  // libgcc's checks include the OS saving the vector registers (XGETBV).
  static const SimdIsa isa = [] {
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("fma"))
      return SimdIsa::avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return SimdIsa::avx2;
    return SimdIsa::baseline;
  }();
  return isa;
#else
  return SimdIsa::baseline;
#endif
}

const char* simd_isa_name(SimdIsa isa) {
  switch (isa) {
    case SimdIsa::avx512:
      return "avx512";
    case SimdIsa::avx2:
      return "avx2";
    case SimdIsa::baseline:
      break;
  }
  return "baseline";
}

SimdIsa cap_simd_isa(const char* cap, SimdIsa cpu) {
  if (cap == nullptr || *cap == '\0') return cpu;
  for (SimdIsa want : {SimdIsa::avx512, SimdIsa::avx2, SimdIsa::baseline})
    if (std::string(cap) == simd_isa_name(want)) return std::min(want, cpu);
  throw std::runtime_error(std::string("ZEROPP_MAX_CPU_ISA=") + cap + ": not one of avx512, avx2, baseline");
}

SimdIsa simd_isa() {
  static const SimdIsa isa = cap_simd_isa(std::getenv("ZEROPP_MAX_CPU_ISA"), cpu_simd_isa());
  return isa;
}

}  // namespace zeropp
