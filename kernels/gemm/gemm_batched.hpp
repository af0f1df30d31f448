// Which kernel runs gemm_strided_batched<float> (gemm.hpp): the attention
// products, per batch element and block of query rows a batch over heads of
// small products (e.g. 64×256×64).
//
// The BLAS runs one call per product; oneDNN's matmul takes the whole batch
// in one call (a 3-D problem with the batch strides). On this project's
// AVX-512 Xeon, one thread, oneDNN ran the attention products 1.2-1.5x
// faster than OpenBLAS called per head, while on the model's large linear
// GEMMs the two libraries are within each other's noise, so those stay on
// the BLAS (docs/performance.md, "fp32 GEMMs: oneDNN against OpenBLAS").
// With more than one thread, two libraries' pools would share the rank's
// cores: OpenBLAS's pthreads spin for a while after each call, right when
// oneDNN's OpenMP threads start (the attention follows the qkv GEMM), so there
// the BLAS keeps all products (one pool). The choice is from oneDNN's ISA and
// the thread count, never from timing, so that runs and resumes repeat bit
// for bit; train.batched_gemm forces either. fp64 products always run on the
// BLAS (oneDNN has no f64 matmul).
#pragma once

#include <string>

#include "src/base/batched_kernel.hpp"

namespace zeropp {

// The kernel for a CPU where oneDNN's effective ISA has AVX-512 or not
// (`onednn_avx512`, the measured case) and the GEMM libraries' OpenMP threads
// (`threads`, set_gemm_threads): OneDnn with AVX-512 and one thread, else Blas.
BatchedKernel choose_batched_kernel(bool onednn_avx512, int threads);

// Forces a kernel; Auto returns to choose_batched_kernel's. OneDnn in a
// build without oneDNN throws std::invalid_argument.
void force_batched_kernel(BatchedKernel k);

// force_batched_kernel(k) for one scope, then back to the rule (tests and
// benchmarks; an exception leaves nothing forced behind).
struct ScopedBatchedKernel {
  explicit ScopedBatchedKernel(BatchedKernel k) { force_batched_kernel(k); }
  ~ScopedBatchedKernel() { force_batched_kernel(BatchedKernel::Auto); }
  ScopedBatchedKernel(const ScopedBatchedKernel&) = delete;
  ScopedBatchedKernel& operator=(const ScopedBatchedKernel&) = delete;
};

// The kernel gemm_strided_batched<float> runs now: Blas or OneDnn.
BatchedKernel batched_kernel();

// What runs them: "oneDNN 2.6.3, ISA avx512_core_bf16: fp32 matmul, a batch per
// call, 1 thread" or "<gemm_backend_name()>, one call per product", with
// " (forced)" when force_batched_kernel set it.
std::string gemm_batched_backend_name();

}  // namespace zeropp
