#include "kernels/gemm/blas_core.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#if defined(ZEROPP_BLAS_OPENBLAS)
#include <cblas.h>
#elif defined(ZEROPP_BLAS_BLIS)
#include <blis.h>
#endif

namespace zeropp {

std::string blas_library() {
#if defined(ZEROPP_BLAS_OPENBLAS)
  // The configuration string starts "OpenBLAS 0.3.21 ...".
  const std::string config = openblas_get_config();
  const size_t end = config.find(' ', config.find(' ') + 1);
  return config.substr(0, end);
#elif defined(ZEROPP_BLAS_BLIS)
  return std::string("BLIS ") + bli_info_get_version_str();
#else
  return "CBLAS";
#endif
}

std::string blas_core_name() {
#if defined(ZEROPP_BLAS_OPENBLAS)
  return openblas_get_corename();
#elif defined(ZEROPP_BLAS_BLIS)
  return bli_arch_string(bli_arch_query_id());
#else
  return "";
#endif
}

CpuVectorFeatures cpu_vector_features() {
  CpuVectorFeatures f;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  f.avx512 = f.avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512dq");
#endif
  return f;
}

std::string blas_better_coretype(const std::string& core, CpuVectorFeatures cpu) {
  // OpenBLAS's x86 kernel sets without AVX2 (lower case: names compare so).
  static const std::array<const char*, 14> generic = {
      "katmai",     "coppermine", "northwood", "prescott",    "banias",  "core2",     "penryn",
      "dunnington", "nehalem",    "atom",      "sandybridge", "opteron", "barcelona", "bobcat"};
  std::string lower = core;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  const bool is_generic = std::find(generic.begin(), generic.end(), lower) != generic.end();
  if (!is_generic || !cpu.avx2) return "";
  return cpu.avx512 ? "SkylakeX" : "Haswell";
}

std::string blas_core_warning(const std::string& core, CpuVectorFeatures cpu) {
  const std::string better = blas_better_coretype(core, cpu);
  if (better.empty()) return "";
  return "BLAS runs its generic " + core + " kernels on a CPU with " + (cpu.avx512 ? "AVX-512" : "AVX2") +
         " (GEMMs several times slower): set OPENBLAS_CORETYPE=" + better +
         " or leave it unset for zeropp to choose";
}

std::string blas_core_warning() { return blas_core_warning(blas_core_name(), cpu_vector_features()); }

}  // namespace zeropp
