// oneDNN's matmul behind the GEMM kernels (gemm_bf16.cpp's bf16 products,
// gemm.cpp's fp32 strided-batched ones): one CPU engine and stream, and one
// primitive per product shape, cached (creating one generates its kernel,
// which costs far more than a small product; the model repeats a few shapes).
// Not thread-safe: the model calls its kernels from one thread (the library
// may use several inside a product).
#pragma once

#include <dnnl.hpp>
#include <string>

#include "kernels/gemm.hpp"

namespace zeropp {

dnnl::engine& onednn_engine();
dnnl::stream& onednn_stream();

// `batch` row-major products C_i = alpha·op(A_i)·op(B_i) + beta·C_i, with
// X_i starting stride_x elements after X_{i-1} (stride ignored for batch 1),
// A and B of type `ab` (f32 or bf16), C fp32 with leading dimension ldc.
struct MatmulShape {
  dnnl::memory::data_type ab;
  Trans ta, tb;
  int M, N, K, batch;
  int64_t lda, ldb, ldc, stride_a, stride_b, stride_c;
  float alpha, beta;
};

// Runs them and waits. K = 0 is not allowed (oneDNN rejects empty sums).
void onednn_matmul(const MatmulShape& s, const void* A, const void* B, float* C);

// Whether oneDNN's effective ISA (capped by DNNL_MAX_CPU_ISA) includes `want`.
bool onednn_has_isa(dnnl::cpu_isa want);

// "oneDNN 2.6.3, ISA avx512_core_bf16".
std::string onednn_version_isa();

}  // namespace zeropp
