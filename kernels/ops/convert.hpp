// fp32 <-> bf16 over n elements (src/base/bf16.hpp: round to nearest even,
// NaNs stay NaN): the engine's bf16 wire and hpZ secondaries.
#pragma once

#include "kernels/runtime/common.hpp"

namespace zeropp {

void to_bf16(CVec<float> in, Vec<uint16_t> out, int64_t n);
void from_bf16(CVec<uint16_t> in, Vec<float> out, int64_t n);
// out[i] <- the fp32 value of in[i]'s nearest bf16 (a bf16 round trip, bit
// for bit, in one pass): the engine's gather at P = 1 and the bf16 GEMMs'
// rounded operands. out may be in itself.
void round_to_bf16(CVec<float> in, Vec<float> out, int64_t n);
// x[i] <- the fp32 value of its nearest bf16: round_to_bf16(x, x, n).
void round_to_bf16(Vec<float> x, int64_t n);

}  // namespace zeropp
