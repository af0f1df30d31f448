// kernels/quant_blocks.hpp compiled for avx512 (CMakeLists.txt sets the flags; kernels/quant_isa.hpp).
#define ZEROPP_QUANT_ISA_NS quant_avx512
#include "kernels/quant_blocks.hpp"

namespace zeropp {

const QuantIsaKernels& quant_kernels_avx512() {
  static const QuantIsaKernels k = quant_avx512::make_table("avx512");
  return k;
}

}  // namespace zeropp
