// GEMM on bf16 operands with fp32 accumulation and fp32 output (mixed precision).
//
// Row-major C[M,N] = alpha * op(bf16(A))[M,K] * op(bf16(B))[K,N] + beta * C:
// A, B and C are fp32 arrays as in gemm.hpp; A and B are rounded to the
// nearest bf16 (ties to even) before the product, the products are summed
// in fp32 and C stays fp32. This is what train.precision = bf16 runs for the
// model's matrix products (PyTorch's CPU autocast to bfloat16 does the same).
//
// Two kernels, chosen from the CPU's features as oneDNN reports them
// (choose_bf16_kernel): oneDNN's bf16 matmul (one primitive per shape,
// cached) where oneDNN finds AMX, whose bf16 tile products run many times the
// fp32 FMA rate; elsewhere the fp32 BLAS on bf16-rounded copies of A and B.
// A product of two bf16 numbers is exact in fp32, so both compute the same
// numbers up to the fp32 summation order. Without AMX the BLAS is the faster
// one: on AVX512-BF16 the bf16 dot-product instruction runs at half the fp32
// FMA rate on this project's Xeon (docs/performance.md), oneDNN's plain
// AVX-512 bf16 is an emulation on fp32 kernels, and oneDNN 2.6 has no bf16
// matmul below AVX-512. gemm_bf16_backend_name() says which runs.
#pragma once

#include <optional>
#include <string>

#include "kernels/gemm/gemm.hpp"
#include "src/base/precision.hpp"

namespace zeropp {

enum class Bf16Kernel {
  OneDnn,       // oneDNN's bf16 matmul (AMX, AVX512-BF16 or emulated on AVX-512)
  RoundedBlas,  // the fp32 BLAS (gemm.hpp) on bf16-rounded fp32 copies of A and B
};

// The kernel for a CPU on which oneDNN has a bf16 matmul (`onednn_bf16`, from
// AVX-512 up) and runs it on AMX tiles (`amx`): OneDnn only with both.
Bf16Kernel choose_bf16_kernel(bool onednn_bf16, bool amx);

// Forces a kernel (tests and `bench step` run both); nullopt returns to
// choose_bf16_kernel's. OneDnn on a CPU where oneDNN has no bf16 matmul
// throws std::invalid_argument.
void force_bf16_kernel(std::optional<Bf16Kernel> k);

// The kernel gemm_bf16 runs now.
Bf16Kernel bf16_kernel();

void gemm_bf16(Trans ta, Trans tb, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
               int ldb, float beta, float* C, int ldc);

// gemm<T> (FP32) or gemm_bf16 (BF16, T = float only; double throws
// std::invalid_argument), as `prec` says.
template <class T>
void gemm_as(Precision prec, Trans ta, Trans tb, int M, int N, int K, T alpha, const T* A, int lda,
             const T* B, int ldb, T beta, T* C, int ldc);

// Triple loop on the bf16-rounded operands, accumulated in double: what
// gemm_bf16 computes up to the fp32 summation order.
void gemm_bf16_reference(Trans ta, Trans tb, int M, int N, int K, float alpha, const float* A, int lda,
                         const float* B, int ldb, float beta, float* C, int ldc);

// What runs the bf16 GEMMs here: "oneDNN 2.6.3, ISA avx512_core_amx (native
// bf16), 1 thread", "... ISA avx512_core (bf16 emulated) ..." or
// "<gemm_backend_name()> on bf16-rounded operands (oneDNN 2.6.3, ISA
// avx512_core_bf16: no AMX)" (or ": no bf16 matmul" below AVX-512).
std::string gemm_bf16_backend_name();

}  // namespace zeropp
