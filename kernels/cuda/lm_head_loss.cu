// The chunked LM head and its cross-entropy on the GPU (kernels/ops/lm_head_loss.hpp
// is the contract), composed of the twins the host composes, in the host's
// order, per chunk of `rows` rows on blas's stream:
//   logits = x_c W^T (cuBLAS, beta 0, into scratch);
//   softmax_crossentropy_forward in place (the chunk's losses);
//   softmax_crossentropy_backward in place (g = softmax - onehot, dloss 1);
//   g[n,:] *= weights[n] (one thread per element: the host's one rounding);
//   dx_c = g W (beta 0);  dW (+)= g^T x_c (beta 0 for the first chunk).
// Precision::BF16 rounds W and x once and each chunk's g (Bf16Copy), as the
// host's rounded_operand does, and multiplies on tensor cores with fp32
// accumulation. Agreement: the GEMMs' and crossentropy.cu's (relative 1e-5 on
// the losses; dx and dW within the GEMM tolerance of kernels/cuda/matmul.cu).
#include <type_traits>

#include "kernels/cuda/bf16_operands.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

namespace {

// Row n of g [N, V] times w[n] (w nullptr: nothing to do).
void scale_rows(float* g, const float* w, int64_t N, int V, cudaStream_t stream) {
  if (w == nullptr) return;
  detail::for_each_index(N * V, stream, [=] __device__(int64_t i) { g[i] *= w[i / V]; });
}

// The chunks on operands x and W of type T (float, or bf16 copies).
template <class T>
void head_chunks(Blas& blas, float* dx, float* dW, float* losses, float* scratch, const T* x, const T* W,
                 const int32_t* targets, const float* weights, int N, int C, int V, int rows) {
  const cudaStream_t s = blas.stream();
  for (int r0 = 0; r0 < N; r0 += rows) {
    const int n = std::min(rows, N - r0);
    const int32_t* tgt = targets + r0;
    mm(blas, Trans::N, Trans::T, n, V, C, x + int64_t(r0) * C, C, W, C, 0.0f, scratch, V);
    softmax_crossentropy_forward(scratch, losses + r0, scratch, tgt, n, V, s);
    if (dx == nullptr) continue;
    softmax_crossentropy_backward(scratch, scratch, tgt, 1.0f, n, V, s);  // in place: g overwrites the probs
    scale_rows(scratch, weights ? weights + r0 : nullptr, n, V, s);
    const auto products = [&](const T* g) {
      mm(blas, Trans::N, Trans::N, n, C, V, g, V, W, C, 0.0f, dx + int64_t(r0) * C, C);
      mm(blas, Trans::T, Trans::N, V, C, n, g, V, x + int64_t(r0) * C, C, r0 == 0 ? 0.0f : 1.0f, dW, C);
    };
    if constexpr (std::is_same_v<T, float>) {
      products(scratch);
    } else {
      const Bf16Copy g16(scratch, int64_t(n) * V, s);
      products(g16.get());
    }
  }
}

}  // namespace

void lm_head_loss(Blas& blas, float* dx, float* dW, float* losses, float* scratch, const float* x,
                  const float* W, const int32_t* targets, const float* weights, int N, int C, int V, int rows,
                  Precision prec) {
  if (prec == Precision::FP32)
    return head_chunks(blas, dx, dW, losses, scratch, x, W, targets, weights, N, C, V, rows);
  const Bf16Copy x16(x, int64_t(N) * C, blas.stream()), w16(W, int64_t(V) * C, blas.stream());
  head_chunks(blas, dx, dW, losses, scratch, x16.get(), w16.get(), targets, weights, N, C, V, rows);
}

}  // namespace zeropp::cuda
