// The linear layer on the GPU (kernels/ops/matmul.hpp is the contract: shapes,
// weight layouts, forward overwriting out, backward accumulating into dweight
// and dbias, and into dinp or over it (GradMode::Overwrite: beta 0 for its GEMM)).
//
// Forward: one thread per element broadcasts the bias into out, then one
// cuBLAS GEMM adds inp · op(W) onto it (beta = 1), as the host does; the
// accumulating forward is that GEMM alone.
// Backward: two cuBLAS GEMMs (dinp with beta 1 or 0, dweight with 1), and the bias
// gradient by the two-level column sums of column_sum.cuh onto dbias[j]
// (deterministic, no atomics; its tolerance against the host's row order).
// The GEMMs agree with the host's within cuBLAS's and OpenBLAS's summation
// orders: relative 1e-4 plus absolute 1e-6 per summed term in fp32, 4e-6 in
// bf16 (tensor cores align and add the products with truncation, a bias that
// grows with the terms; tests/cuda/test_cuda_kernels.cpp). Forgetting the bf16
// rounding of the operands would miss this by ten times or more.
//
// Precision::BF16: the operands are rounded to bf16 (the collectives' to_bf16,
// round to nearest even as on the host) into stream-ordered scratch
// (cudaMallocAsync, freed on the stream), then multiplied on tensor cores with
// fp32 accumulation into the fp32 outputs (gemm_bf16_fp32): the host's
// gemm_bf16 up to the summation order. The backward rounds dout once for both
// of its GEMMs (rounding is deterministic, so this is what the host computes).
#include "kernels/cuda/bf16_operands.hpp"
#include "kernels/cuda/column_sum.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

namespace {

// matmul.hpp's GEMMs on operands of type T (float or bf16), written once for both precisions.
template <class T>
void forward_gemm(Blas& blas, float* out, const T* inp, const T* weight, bool accumulate, int N, int C,
                  int OC, Trans wlayout) {
  const int ldw = wlayout == Trans::N ? OC : C;
  mm(blas, Trans::N, wlayout, N, OC, C, inp, C, weight, ldw, accumulate ? 1.0f : 0.0f, out, OC);
}

// out (+)= inp · op(W) in either precision (beta = 1 when accumulate).
void forward_product(Blas& blas, float* out, const float* inp, const float* weight, bool accumulate, int N,
                     int C, int OC, Trans wlayout, Precision prec) {
  if (prec == Precision::FP32) return forward_gemm(blas, out, inp, weight, accumulate, N, C, OC, wlayout);
  const Bf16Copy inp16(inp, int64_t(N) * C, blas.stream()), w16(weight, int64_t(C) * OC, blas.stream());
  forward_gemm(blas, out, inp16.get(), w16.get(), accumulate, N, C, OC, wlayout);
}

template <class T>
void backward_gemms(Blas& blas, float* dinp, float* dweight, const T* dout, const T* inp, const T* weight,
                    int N, int C, int OC, Trans wlayout, GradMode dinp_mode) {
  const float beta_dinp = dinp_mode == GradMode::Overwrite ? 0.0f : 1.0f;
  if (wlayout == Trans::N) {  // W [C,OC]: dinp (+)= dout · W^T, dW += inp^T · dout
    mm(blas, Trans::N, Trans::T, N, C, OC, dout, OC, weight, OC, beta_dinp, dinp, C);
    mm(blas, Trans::T, Trans::N, C, OC, N, inp, C, dout, OC, 1.0f, dweight, OC);
  } else {  // W [OC,C]: dinp (+)= dout · W, dW += dout^T · inp
    mm(blas, Trans::N, Trans::N, N, C, OC, dout, OC, weight, C, beta_dinp, dinp, C);
    mm(blas, Trans::T, Trans::N, OC, C, N, dout, OC, inp, C, 1.0f, dweight, C);
  }
}

}  // namespace

void matmul_forward(Blas& blas, float* out, const float* inp, const float* weight, const float* bias, int N,
                    int C, int OC, Trans wlayout, Precision prec) {
  const bool has_bias = bias != nullptr;
  if (has_bias)
    detail::for_each_index(int64_t(N) * OC, blas.stream(),
                           [=] __device__(int64_t i) { out[i] = bias[i % OC]; });
  forward_product(blas, out, inp, weight, has_bias, N, C, OC, wlayout, prec);
}

void matmul_forward_accumulate(Blas& blas, float* out, const float* inp, const float* weight, int N, int C,
                               int OC, Trans wlayout, Precision prec) {
  forward_product(blas, out, inp, weight, true, N, C, OC, wlayout, prec);
}

void matmul_backward(Blas& blas, float* dinp, float* dweight, float* dbias, const float* dout,
                     const float* inp, const float* weight, int N, int C, int OC, Trans wlayout,
                     Precision prec, GradMode dinp_mode) {
  if (prec == Precision::FP32) {
    backward_gemms(blas, dinp, dweight, dout, inp, weight, N, C, OC, wlayout, dinp_mode);
  } else {
    const Bf16Copy dout16(dout, int64_t(N) * OC, blas.stream()), inp16(inp, int64_t(N) * C, blas.stream()),
        w16(weight, int64_t(C) * OC, blas.stream());
    backward_gemms(blas, dinp, dweight, dout16.get(), inp16.get(), w16.get(), N, C, OC, wlayout, dinp_mode);
  }
  if (dbias == nullptr) return;
  const auto term = [=] __device__(int64_t n, int j, float* v) { v[0] = dout[n * OC + j]; };
  detail::column_sums<1>(N, OC, term, {{dbias}}, blas.stream());
}

}  // namespace zeropp::cuda
