#include "kernels/ops/accumulate.hpp"

#include "kernels/runtime/device_context.hpp"
#include "kernels/runtime/parallel_chunks.hpp"
#include "kernels/runtime/simd_dispatch.hpp"

#ifdef ZEROPP_HAVE_CUDA
#include "kernels/cuda/ops.hpp"
#endif

namespace zeropp {

namespace {

struct AccumulateScaled {
  static ZEROPP_SIMD_INLINE void run(float* y, const float* x, float a, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += x[i] * a;
  }
};

}  // namespace

void accumulate_scaled(Vec<float> y, CVec<float> x, float a, int64_t n) {
  ZEROPP_ON_DEVICE(float, "accumulate_scaled", cuda::accumulate_scaled(y.data(), x.data(), a, n, ZD->stream));
  parallel_chunks(n, kChunkElements, [&](int64_t, int64_t b, int64_t e) {
    simd_dispatch<AccumulateScaled>(y.data() + b, x.data() + b, a, e - b);
  });
}

}  // namespace zeropp
