#include "kernels/ops/convert.hpp"

#include <cstring>

#include "kernels/runtime/device_context.hpp"
#include "kernels/runtime/parallel_chunks.hpp"
#include "kernels/runtime/simd_dispatch.hpp"
#include "src/base/bf16.hpp"

#ifdef ZEROPP_HAVE_CUDA
#include "kernels/cuda/ops.hpp"
#endif

namespace zeropp {

namespace {

struct ToBf16 {
  static ZEROPP_SIMD_INLINE void run(const float* in, uint16_t* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = fp32_to_bf16(in[i]);
  }
};

struct FromBf16 {
  static ZEROPP_SIMD_INLINE void run(const uint16_t* in, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_fp32(in[i]);
  }
};

// fp32_to_bf16 then bf16_to_fp32 (src/base/bf16.hpp) on the bits, with the
// NaN case a select instead of an early return so that the loop vectorises.
struct RoundToBf16 {
  static ZEROPP_SIMD_INLINE void run(const float* in, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      uint32_t u;
      std::memcpy(&u, in + i, 4);
      const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
      const uint32_t quiet_nan = (u | 0x00400000u) & 0xffff0000u;
      const uint32_t r = (u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded;
      std::memcpy(out + i, &r, 4);
    }
  }
};

}  // namespace

void to_bf16(CVec<float> in, Vec<uint16_t> out, int64_t n) {
  ZEROPP_ON_DEVICE(float, "to_bf16", cuda::to_bf16(in.data(), out.data(), n, ZD->stream));
  parallel_chunks(n, kChunkElements, [&](int64_t, int64_t b, int64_t e) {
    simd_dispatch<ToBf16>(in.data() + b, out.data() + b, e - b);
  });
}

void from_bf16(CVec<uint16_t> in, Vec<float> out, int64_t n) {
  ZEROPP_ON_DEVICE(float, "from_bf16", cuda::from_bf16(in.data(), out.data(), n, ZD->stream));
  parallel_chunks(n, kChunkElements, [&](int64_t, int64_t b, int64_t e) {
    simd_dispatch<FromBf16>(in.data() + b, out.data() + b, e - b);
  });
}

void round_to_bf16(CVec<float> in, Vec<float> out, int64_t n) {
  ZEROPP_ON_DEVICE(float, "round_to_bf16", cuda::round_to_bf16(in.data(), out.data(), n, ZD->stream));
  parallel_chunks(n, kChunkElements, [&](int64_t, int64_t b, int64_t e) {
    simd_dispatch<RoundToBf16>(in.data() + b, out.data() + b, e - b);
  });
}

void round_to_bf16(Vec<float> x, int64_t n) { round_to_bf16(x, x, n); }

}  // namespace zeropp
