// The instruction set the quantization kernels are compiled for.
//
// On x86-64, kernels/quantize.cpp and kernels/quant_reduce.cpp are built with
// -march=x86-64-v2 (SSE4.1/4.2: a packed signed 32-bit max for the absmax and
// packed narrowing for int8/int4, 1.4x on quantize_int8/int4; docs/performance.md).
// Every x86-64 CPU since about 2009 has it; on one without it the kernels would
// die with SIGILL, so they call require_quant_isa first, which is compiled for
// the baseline and throws a clear error instead. Elsewhere it does nothing.
#pragma once

namespace zeropp {

// Throws std::runtime_error naming `who` and the missing instruction set.
void require_quant_isa(const char* who);

}  // namespace zeropp
