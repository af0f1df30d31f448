// The instruction set the quantization kernels are compiled for.
//
// On x86-64, the quantization kernels' loops are built for x86-64-v2 at the
// least (kernels/quant_isa_sse4.cpp: SSE4.1/4.2; AVX2 and AVX-512 copies are
// chosen at load time where the CPU has them, kernels/quant_isa.hpp).
// Every x86-64 CPU since about 2009 has it; on one without it the kernels would
// die with SIGILL, so they call require_quant_isa first, which is compiled for
// the baseline and throws a clear error instead. Elsewhere it does nothing.
#pragma once

namespace zeropp {

// Throws std::runtime_error naming `who` and the missing instruction set.
void require_quant_isa(const char* who);

}  // namespace zeropp
