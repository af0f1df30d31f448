// Device-side local work of the collectives (src/comm/nccl/nccl_communicator.hpp): the same
// fp32 arithmetic, in the same order, as the MPI backend (src/comm/mpi/mpi_communicator.cpp),
// so both give identical bits.
//
//   ring_accumulate: acc[i] = wire_in[i] + own[i], wire_in fp32 or bf16 (widened
//                    exactly), one reduce-scatter hop.
//   to_bf16:         fp32 -> bf16 bits, round to nearest even, NaN kept quiet
//                    with its sign (src/base/bf16.hpp's fp32_to_bf16, bit for bit).
//   sum_members:     out[i] = all[i] + all[n+i] + ... + all[(p-1)n+i], left to
//                    right (the small-value all-reduce), float or double.
// Asynchronous on `stream`; launch failures throw std::runtime_error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace zeropp::cuda {

void ring_accumulate(const void* wire_in, bool wire_bf16, const float* own, float* acc, int64_t n,
                     cudaStream_t stream = nullptr);
void to_bf16(const float* in, uint16_t* out, int64_t n, cudaStream_t stream = nullptr);
void sum_members(const float* all, int p, float* out, int64_t n, cudaStream_t stream = nullptr);
void sum_members(const double* all, int p, double* out, int64_t n, cudaStream_t stream = nullptr);

}  // namespace zeropp::cuda
