// qgZ step 1's reorder (src/zero/qgz.hpp): grad holds P = X·Y slices of
// s = n/P elements; out holds X chunks of Y·s, chunk x = [S_x, S_{X+x}, ...,
// S_{(Y-1)X+x}], i.e. out[x·Y·s + y·s + i] = grad[(y·X + x)·s + i]
// (quant_ref::qgz_reorder is the plain-loop reference). n must be a multiple of X·Y.
#pragma once

#include "kernels/runtime/common.hpp"

namespace zeropp {

void qgz_reorder(CVec<float> grad, Vec<float> out, int64_t n, int X, int Y);

// The reorder fused into the blockwise quantization (kernels/quant/quantize.hpp):
// q and scales are those of quantize_int*(reordered grad), bit for bit
// (quant_ref::qgz_reorder_quantize), but each block is read from its place in
// grad and no reordered copy is made. The slice s = n/(X·Y) must be a whole
// number of blocks (the engine pads units to a multiple of P·block); throws
// std::invalid_argument otherwise, and as check_quant_args does.
void qgz_reorder_quantize_int8(CVec<float> grad, Vec<int8_t> q, Vec<float> scales, int64_t n, int X, int Y,
                               int64_t block);
void qgz_reorder_quantize_int4(CVec<float> grad, Vec<uint8_t> q, Vec<float> scales, int64_t n, int X, int Y,
                               int64_t block);

}  // namespace zeropp
