// kernels/quant_blocks.hpp compiled for avx2 (CMakeLists.txt sets the flags; kernels/quant_isa.hpp).
#define ZEROPP_QUANT_ISA_NS quant_avx2
#include "kernels/quant_blocks.hpp"

namespace zeropp {

const QuantIsaKernels& quant_kernels_avx2() {
  static const QuantIsaKernels k = quant_avx2::make_table("avx2");
  return k;
}

}  // namespace zeropp
