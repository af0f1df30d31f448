// The kernels that may run the attention's batched fp32 GEMMs
// (kernels/gemm/gemm_batched.hpp), as train.batched_gemm names them.
#pragma once

#include "src/base/deck_enum.hpp"

namespace zeropp {

enum class BatchedKernel {
  Auto,    // kernels/gemm/gemm_batched.hpp's rule decides (choose_batched_kernel)
  Blas,    // the BLAS (kernels/gemm/gemm.hpp's gemm), once per product
  OneDnn,  // oneDNN's fp32 matmul, the batch in one call
};
constexpr std::array<DeckName<BatchedKernel>, 3> deck_names(BatchedKernel) {
  return {{{BatchedKernel::Auto, "auto"}, {BatchedKernel::Blas, "blas"}, {BatchedKernel::OneDnn, "onednn"}}};
}

}  // namespace zeropp
