// kernels/quant/quant_blocks.hpp for AVX2 (-march=x86-64-v3); CMakeLists.txt sets the flags.
#define ZEROPP_QUANT_ISA avx2
#include "kernels/quant/quant_blocks.hpp"
