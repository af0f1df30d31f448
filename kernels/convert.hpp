// fp32 <-> bf16 over n elements (src/base/bf16.hpp: round to nearest even,
// NaNs stay NaN): the engine's bf16 wire and hpZ secondaries.
#pragma once

#include "kernels/common.hpp"

namespace zeropp {

void to_bf16(CVec<float> in, Vec<uint16_t> out, int64_t n);
void from_bf16(CVec<uint16_t> in, Vec<float> out, int64_t n);
// x[i] <- the fp32 value of its nearest bf16 (a bf16 round trip).
void round_to_bf16(Vec<float> x, int64_t n);

}  // namespace zeropp
