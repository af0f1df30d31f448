// exp(x) for x <= 0 that GCC vectorises, shared by every kernel whose inner
// loop is exponentials: softmax rows (cross-entropy, attention) and GELU.
//
// glibc's expf is a scalar call the compiler cannot vectorise (we build
// without -ffast-math). Here: x = n*ln2 + r with |r| <= ln2/2, exp(r) by
// Cephes' degree-5 polynomial (within 1.4 ulp of exp over [-87.3, 0], checked
// exhaustively), 2^n built in the exponent bits. |x| is clamped to 88 in the
// integer domain, where n reaches -127 and 2^n is +0: below about -87.5 the
// result is 0 (expf gives a denormal there). No float compare or select
// appears: with the default -ftrapping-math either one keeps GCC from
// vectorising the loop. A NaN argument gives NaN (so does -inf, where expf
// gives 0: a non-finite input then surfaces as a NaN).
// Doubles (gradient checks) keep the library exponential.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/runtime/common.hpp"

namespace zeropp {

KOKKOS_FORCEINLINE_FUNCTION float exp_nonpositive(float x) {
  int32_t xb;
  memcpy(&xb, &x, sizeof xb);
  const int32_t mag = xb & 0x7fffffff;                                              // bits of |x|
  const int32_t cb = int32_t(0x80000000u) | (mag > 0x42B00000 ? 0x42B00000 : mag);  // -min(|x|, 88)
  float xc;
  memcpy(&xc, &cb, sizeof xc);
  const float n = float(int(xc * 1.44269504088896341f - 0.5f));  // round(xc / ln2), in [-127, 0]
  float r = xc - n * 0.693359375f;                               // Cody-Waite: ln2 in two parts
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * r * r + r + 1.0f;
  const int32_t bits = (int32_t(n) + 127) << 23;  // 2^n; n = -127 gives +0
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  return er * scale + (x - x);  // x - x: 0, or NaN for a NaN/infinite x
}
KOKKOS_INLINE_FUNCTION double exp_nonpositive(double x) { return std::exp(x); }

// tanh(u) = sign(u) (1 - e) / (1 + e) with e = exp(-2|u|) <= 1, so the
// exponential above applies; |u| and the sign are taken in the bits (no
// compare). Saturates to ±1 exactly; near 0 it loses relative but not
// absolute accuracy (what GELU's 0.5 x (1 + tanh) needs): within 1.5 ulp where
// |tanh| > 0.5 and 9e-8 absolute over [0, 11] (every 7th float, FMA path).
// The division stays: a reciprocal by polynomial + Newton steps was slower on
// every instruction set (docs/performance.md).
KOKKOS_FORCEINLINE_FUNCTION float tanh_vectorisable(float u) {
  int32_t ub;
  memcpy(&ub, &u, sizeof ub);
  const int32_t mag = ub & 0x7fffffff;
  float au;
  memcpy(&au, &mag, sizeof au);
  const float e = exp_nonpositive(-2.0f * au);
  const float t = (1.0f - e) / (1.0f + e);
  int32_t tb;
  memcpy(&tb, &t, sizeof tb);
  tb |= ub & int32_t(0x80000000u);
  float out;
  memcpy(&out, &tb, sizeof out);
  return out;
}
KOKKOS_INLINE_FUNCTION double tanh_vectorisable(double u) { return 1.0 - 2.0 / (std::exp(2.0 * u) + 1.0); }

}  // namespace zeropp
