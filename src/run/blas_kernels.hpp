// The BLAS kernels a bare launch gets, chosen before MPI starts.
//
// OpenBLAS 0.3.21 (Debian 12) picks its kernels from the CPU's model number
// when it is loaded, and on CPUs it does not know (Intel Sapphire/Emerald
// Rapids) runs generic SSE3 kernels, several times slower. It reads
// OPENBLAS_CORETYPE only at load time, so the only way for the binary to get
// the right kernels by itself is to start again with the variable set.
#pragma once

#include <string>

namespace zeropp {

// When OPENBLAS_CORETYPE is unset (or empty) and OpenBLAS chose generic kernels
// on a CPU with AVX2 or AVX-512, re-executes this program once (same argv, same
// process: the MPI launcher's environment and descriptors stay) with
// OPENBLAS_CORETYPE from the CPU's feature flags and ZEROPP_BLAS_CORETYPE_CHOSEN=1;
// returns otherwise. A non-empty OPENBLAS_CORETYPE is the user's or site's choice
// and is kept. Call first thing in main, before MPI_Init.
void choose_blas_kernels(char** argv);

// The kernels in use for the start-up tables: "SkylakeX", or "SkylakeX
// (OPENBLAS_CORETYPE chosen from the CPU's flags)" in a re-executed process.
std::string blas_kernels_summary();

}  // namespace zeropp
