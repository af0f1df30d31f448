// Operand precision of the model's matrix products (train.precision).
//
//   FP32  fp32 operands, fp32 GEMMs (gemm.hpp).
//   BF16  mixed precision: operands rounded to bf16, products summed in fp32,
//         fp32 results (gemm_bf16.hpp). Everything else (LayerNorm, softmax,
//         GELU, loss, residuals, master weights, optimizer) stays fp32.
#pragma once

#include <stdexcept>
#include <string>

namespace zeropp {

enum class Precision { FP32, BF16 };

inline const char* precision_name(Precision p) { return p == Precision::BF16 ? "bf16" : "fp32"; }

// "fp32" or "bf16"; anything else throws std::invalid_argument naming the value.
inline Precision parse_precision(const std::string& s) {
  if (s == "fp32") return Precision::FP32;
  if (s == "bf16") return Precision::BF16;
  throw std::invalid_argument("precision must be fp32 or bf16, got '" + s + "'");
}

}  // namespace zeropp
