#include "kernels/quant_isa.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace zeropp {

const QuantIsaKernels& quant_kernels_for(const char* cap) {
  const std::string c = cap ? cap : "";
  if (!c.empty() && c != "avx512" && c != "avx2" && c != "sse4")
    throw std::invalid_argument("ZEROPP_QUANT_ISA=" + c + ": expected avx512, avx2 or sse4");
#if defined(__x86_64__) && defined(__GNUC__)
  // x86-64-v4: AVX-512 F, BW, CD, DQ, VL; v3: AVX2, FMA, BMI1/2 (what -march=x86-64-v3/v4 may use).
  if ((c.empty() || c == "avx512") && __builtin_cpu_supports("x86-64-v4")) return quant_kernels_avx512();
  if ((c.empty() || c == "avx512" || c == "avx2") && __builtin_cpu_supports("x86-64-v3"))
    return quant_kernels_avx2();
#endif
  return quant_kernels_sse4();
}

const QuantIsaKernels& quant_kernels() {
  static const QuantIsaKernels& k = quant_kernels_for(std::getenv("ZEROPP_QUANT_ISA"));
  return k;
}

}  // namespace zeropp
