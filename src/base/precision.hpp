// Operand precision of the model's matrix products (train.precision).
//
//   FP32  fp32 operands, fp32 GEMMs (kernels/gemm/gemm.hpp).
//   BF16  mixed precision: operands rounded to bf16, products summed in fp32,
//         fp32 results (kernels/gemm/gemm_bf16.hpp). Everything else (LayerNorm, softmax,
//         GELU, loss, residuals, master weights, optimizer) stays fp32.
#pragma once

#include "src/base/deck_enum.hpp"

namespace zeropp {

enum class Precision { FP32, BF16 };
constexpr std::array<DeckName<Precision>, 2> deck_names(Precision) {
  return {{{Precision::FP32, "fp32"}, {Precision::BF16, "bf16"}}};
}

}  // namespace zeropp
