// The launcher behind causal_softmax_forward (kernels/cuda/causal_softmax.cu),
// with the generality attention_decode.cu needs: rows of `len` scores where
// row r sees columns 0..pos + r % Tn (training: len = Tn, pos = 0).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace zeropp::cuda::detail {

// att may be pre (in place). Masked columns are written 0 and never read.
void causal_softmax_rows(float* att, const float* pre, int64_t rows, int Tn, int len, int pos,
                         cudaStream_t stream);

}  // namespace zeropp::cuda::detail
