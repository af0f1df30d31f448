#include "kernels/convert.hpp"

#include "kernels/device_context.hpp"
#include "kernels/parallel_chunks.hpp"
#include "kernels/simd_dispatch.hpp"
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

struct RoundToBf16 {
  static ZEROPP_SIMD_INLINE void run(float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] = bf16_to_fp32(fp32_to_bf16(x[i]));
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

void round_to_bf16(Vec<float> x, int64_t n) {
  ZEROPP_ON_DEVICE(float, "round_to_bf16", cuda::round_to_bf16(x.data(), n, ZD->stream));
  parallel_chunks(n, kChunkElements,
                  [&](int64_t, int64_t b, int64_t e) { simd_dispatch<RoundToBf16>(x.data() + b, e - b); });
}

}  // namespace zeropp
