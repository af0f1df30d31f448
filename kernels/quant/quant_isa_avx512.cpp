// kernels/quant/quant_blocks.hpp for AVX-512 (-march=x86-64-v4); CMakeLists.txt sets the flags.
#define ZEROPP_QUANT_ISA avx512
#include "kernels/quant/quant_blocks.hpp"
