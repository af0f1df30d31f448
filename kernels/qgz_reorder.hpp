// qgZ step 1's reorder (src/zero/qgz.hpp): grad holds P = X·Y slices of
// s = n/P elements; out holds X chunks of Y·s, chunk x = [S_x, S_{X+x}, ...,
// S_{(Y-1)X+x}], i.e. out[x·Y·s + y·s + i] = grad[(y·X + x)·s + i]
// (quant_ref::qgz_reorder is the plain-loop reference). n must be a multiple of X·Y.
#pragma once

#include "kernels/common.hpp"

namespace zeropp {

void qgz_reorder(CVec<float> grad, Vec<float> out, int64_t n, int X, int Y);

}  // namespace zeropp
