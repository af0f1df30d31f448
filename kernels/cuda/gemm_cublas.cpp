#include "kernels/cuda/gemm_cublas.hpp"

#include <stdexcept>
#include <type_traits>

namespace zeropp::cuda {

namespace {

void check(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLAS: ") + call + " failed: " + cublasGetStatusName(s) + " (" +
                             cublasGetStatusString(s) + ")");
}

cublasOperation_t op(Trans t) { return t == Trans::N ? CUBLAS_OP_N : CUBLAS_OP_T; }

template <class T>
struct Types;
template <>
struct Types<float> {
  static constexpr cudaDataType_t data = CUDA_R_32F;
};
template <>
struct Types<__nv_bfloat16> {
  static constexpr cudaDataType_t data = CUDA_R_16BF;
};

template <class T>
cublasComputeType_t compute(const Blas& b) {
  if (std::is_same_v<T, float> && b.allow_tf32()) return CUBLAS_COMPUTE_32F_FAST_TF32;
  return CUBLAS_COMPUTE_32F;
}

}  // namespace

Blas::Blas(cudaStream_t stream, bool allow_tf32) : stream_(stream), allow_tf32_(allow_tf32) {
  check(cublasCreate(&handle_), "cublasCreate");
  check(cublasSetStream(handle_, stream_), "cublasSetStream");
  // Tensor cores for bf16 (and TF32 when allowed); never reduced-precision reductions for fp32.
  check(cublasSetMathMode(handle_, allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
        "cublasSetMathMode");
}

Blas::~Blas() {
  if (handle_) cublasDestroy(handle_);
}

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the
// operands and M/N, keep the transposition flags and leading dimensions.
template <class T>
void gemm(Blas& blas, Trans ta, Trans tb, int M, int N, int K, float alpha, const T* A, int lda, const T* B,
          int ldb, float beta, T* C, int ldc) {
  if (M == 0 || N == 0) return;
  check(
      cublasGemmEx(blas.handle(), op(tb), op(ta), N, M, K, &alpha, B, Types<T>::data, ldb, A, Types<T>::data,
                   lda, &beta, C, Types<T>::data, ldc, compute<T>(blas), CUBLAS_GEMM_DEFAULT),
      "cublasGemmEx");
}

void gemm_bf16_fp32(Blas& blas, Trans ta, Trans tb, int M, int N, int K, float alpha, const __nv_bfloat16* A,
                    int lda, const __nv_bfloat16* B, int ldb, float beta, float* C, int ldc) {
  if (M == 0 || N == 0) return;
  check(cublasGemmEx(blas.handle(), op(tb), op(ta), N, M, K, &alpha, B, CUDA_R_16BF, ldb, A, CUDA_R_16BF, lda,
                     &beta, C, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx (bf16 x bf16 -> fp32)");
}

template <class T>
void gemm_strided_batched(Blas& blas, Trans ta, Trans tb, int M, int N, int K, float alpha, const T* A,
                          int lda, int64_t strideA, const T* B, int ldb, int64_t strideB, float beta, T* C,
                          int ldc, int64_t strideC, int batch) {
  if (M == 0 || N == 0 || batch == 0) return;
  check(cublasGemmStridedBatchedEx(blas.handle(), op(tb), op(ta), N, M, K, &alpha, B, Types<T>::data, ldb,
                                   strideB, A, Types<T>::data, lda, strideA, &beta, C, Types<T>::data, ldc,
                                   strideC, batch, compute<T>(blas), CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
}

std::string gemm_backend_name() {
  return "cuBLAS " + std::to_string(CUBLAS_VER_MAJOR) + "." + std::to_string(CUBLAS_VER_MINOR) + "." +
         std::to_string(CUBLAS_VER_PATCH) + " (fp32; bf16 tensor-op, fp32 accumulation)";
}

#define ZEROPP_INSTANTIATE_CUBLAS_GEMM(T)                                                                   \
  template void gemm<T>(Blas&, Trans, Trans, int, int, int, float, const T*, int, const T*, int, float, T*, \
                        int);                                                                               \
  template void gemm_strided_batched<T>(Blas&, Trans, Trans, int, int, int, float, const T*, int, int64_t,  \
                                        const T*, int, int64_t, float, T*, int, int64_t, int);
ZEROPP_INSTANTIATE_CUBLAS_GEMM(float)
ZEROPP_INSTANTIATE_CUBLAS_GEMM(__nv_bfloat16)

}  // namespace zeropp::cuda
