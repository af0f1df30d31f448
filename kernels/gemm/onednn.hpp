// oneDNN behind the GEMM kernels (gemm_bf16.cpp's bf16 products,
// gemm_batched.cpp's fp32 strided-batched ones), without oneDNN's headers.
// Two backends implement it: kernels/gemm/onednn_matmul.cpp (oneDNN's matmul) and,
// in builds configured with ZEROPP_WITH_ONEDNN=OFF, kernels/gemm/onednn_absent.cpp,
// whose oneDNN has no ISA, so that both kernels choose the BLAS and refuse to
// be forced onto oneDNN; its products are never reached.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/gemm/gemm.hpp"

namespace zeropp {

enum class MatmulType { F32, BF16 };

// `batch` row-major products C_i = alpha·op(A_i)·op(B_i) + beta·C_i, with
// X_i starting stride_x elements after X_{i-1} (stride ignored for batch 1),
// A and B of type `ab` (fp32, or bf16 as uint16_t), C fp32 with leading dimension ldc.
struct MatmulShape {
  MatmulType ab;
  Trans ta, tb;
  int M, N, K, batch;
  int64_t lda, ldb, ldc, stride_a, stride_b, stride_c;
  float alpha, beta;
};

// Runs them and waits. K = 0 is not allowed (oneDNN rejects empty sums).
void onednn_matmul(const MatmulShape& s, const void* A, const void* B, float* C);

// Rounds the [rows, cols] fp32 matrix x (leading dimension ld) to the nearest
// bf16 (ties to even, NaN kept) into `out`, packed (leading dimension cols),
// by oneDNN's vectorised conversion.
void onednn_round_to_bf16(const float* x, int rows, int cols, int64_t ld, uint16_t* out);

// What oneDNN's effective ISA (capped by DNNL_MAX_CPU_ISA) includes: AVX-512
// (core), AMX tiles, bf16 dot-product instructions (AVX512-BF16 or AMX).
bool onednn_has_avx512();
bool onednn_has_amx();
bool onednn_native_bf16();

// "oneDNN 2.6.3, ISA avx512_core_bf16", or "no oneDNN in this build".
std::string onednn_version_isa();

}  // namespace zeropp
