// kernels/quant/quant_blocks.hpp for SSE4.2 (-march=x86-64-v2); CMakeLists.txt sets the flags.
#define ZEROPP_QUANT_ISA sse4
#include "kernels/quant/quant_blocks.hpp"
