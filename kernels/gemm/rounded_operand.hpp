// A bf16 GEMM operand rounded once and reused by several products.
//
// gemm_bf16 rounds both operands on every call. Where its kernel is the fp32
// BLAS on bf16-rounded copies (gemm_bf16.hpp, Bf16Kernel::RoundedBlas), an
// operand that feeds several products (matmul_backward's dout feeds two; the
// chunked LM head's weights feed two per chunk) is rounded once by
// rounded_operand and the products run on the copies through
// gemm_on_rounded: the same numbers as gemm_as, with fewer rounding passes.
// Otherwise (fp32, double, or oneDNN's bf16 matmul, which converts operands
// itself) rounded_operand returns the operand unchanged and gemm_on_rounded
// is gemm_as.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/gemm/gemm.hpp"
#include "src/base/precision.hpp"

namespace zeropp {

// Whether products at `prec` take operands rounded by rounded_operand.
template <class T>
bool rounds_operands(Precision prec);

// x[0, n) rounded to bf16 into `scratch` (resized, kept for reuse) when
// rounds_operands<T>(prec); x itself otherwise.
template <class T>
const T* rounded_operand(Precision prec, const T* x, int64_t n, std::vector<T>& scratch);

// C = alpha·op(A)·op(B) + beta·C on operands from rounded_operand (gemm.hpp's
// shapes): gemm<T> when rounds_operands<T>(prec), gemm_as<T> otherwise.
template <class T>
void gemm_on_rounded(Precision prec, Trans ta, Trans tb, int M, int N, int K, T alpha, const T* A, int lda,
                     const T* B, int ldb, T beta, T* C, int ldc);

}  // namespace zeropp
