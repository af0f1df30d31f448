#include "kernels/gemm/rounded_operand.hpp"

#include <type_traits>

#include "kernels/gemm/gemm_bf16.hpp"
#include "kernels/ops/convert.hpp"
#include "kernels/runtime/device_context.hpp"

namespace zeropp {

template <class T>
bool rounds_operands(Precision prec) {
  return std::is_same<T, float>::value && prec == Precision::BF16 && bf16_kernel() == Bf16Kernel::RoundedBlas;
}

template <class T>
const T* rounded_operand(Precision prec, const T* x, int64_t n, std::vector<T>& scratch) {
  // Host copies of device operands: the CUDA twins of its callers (matmul,
  // lm_head_loss) round their operands themselves, so nothing may reach it there.
  if (device_context()) no_device_twin("rounded_operand");
  if (!rounds_operands<T>(prec)) return x;
  scratch.resize(size_t(n));
  if constexpr (std::is_same<T, float>::value)
    round_to_bf16(CVec<float>(x, n), Vec<float>(scratch.data(), n), n);
  return scratch.data();
}

template <class T>
void gemm_on_rounded(Precision prec, Trans ta, Trans tb, int M, int N, int K, T alpha, const T* A, int lda,
                     const T* B, int ldb, T beta, T* C, int ldc) {
  if (device_context()) no_device_twin("gemm_on_rounded");  // as rounded_operand
  if (rounds_operands<T>(prec))
    gemm<T>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  else
    gemm_as<T>(prec, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

#define ZEROPP_INSTANTIATE_ROUNDED_OPERAND(T)                                                               \
  template bool rounds_operands<T>(Precision);                                                              \
  template const T* rounded_operand<T>(Precision, const T*, int64_t, std::vector<T>&);                      \
  template void gemm_on_rounded<T>(Precision, Trans, Trans, int, int, int, T, const T*, int, const T*, int, \
                                   T, T*, int);
ZEROPP_INSTANTIATE_ROUNDED_OPERAND(float)
ZEROPP_INSTANTIATE_ROUNDED_OPERAND(double)

}  // namespace zeropp
