// kernels/quant_blocks.hpp compiled for sse4 (CMakeLists.txt sets the flags; kernels/quant_isa.hpp).
#define ZEROPP_QUANT_ISA_NS quant_sse4
#include "kernels/quant_blocks.hpp"

namespace zeropp {

const QuantIsaKernels& quant_kernels_sse4() {
  static const QuantIsaKernels k = quant_sse4::make_table("sse4");
  return k;
}

}  // namespace zeropp
