#include "kernels/quant/quant_fp8.hpp"

#include "kernels/quant/quant_fp8_ref.hpp"
#include "kernels/quant/quantize.hpp"
#include "kernels/runtime/device_context.hpp"
#include "src/base/bf16.hpp"

#ifdef ZEROPP_HAVE_CUDA
#include "kernels/cuda/quant_fp8.cuh"
#endif

namespace zeropp {

void quantize_fp8(CVec<float> x, Vec<uint8_t> q, Vec<float> scales, int64_t n, int64_t block) {
  check_quant_args("quantize_fp8", 8, n, block, x.extent(0), q.extent(0), scales.extent(0));
  ZEROPP_ON_DEVICE(float, "quantize_fp8",
                   cuda::quantize_fp8(x.data(), q.data(), scales.data(), n, block, ZD->stream));
  const float* px = x.data();
  uint8_t* pq = q.data();
  float* ps = scales.data();
  Kokkos::parallel_for(
      "quantize_fp8", Range(0, n / block),
      KOKKOS_LAMBDA(const int64_t b) { fp8::quantize_block(px + b * block, pq + b * block, ps + b, block); });
}

namespace {
template <bool Bf16>
void dequantize(const char* who, CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n,
                int64_t block) {
  check_quant_args(who, 8, n, block, x.extent(0), q.extent(0), scales.extent(0));
  ZEROPP_ON_DEVICE(float, "dequantize_fp8",
                   cuda::dequantize_fp8(q.data(), scales.data(), x.data(), n, block, Bf16, ZD->stream));
  const uint8_t* pq = q.data();
  const float* ps = scales.data();
  float* px = x.data();
  Kokkos::parallel_for(
      who, Range(0, n / block), KOKKOS_LAMBDA(const int64_t b) {
        fp8::dequantize_block(pq + b * block, ps[b], px + b * block, block);
        if constexpr (Bf16) round_to_bf16(px + b * block, block);
      });
}
}  // namespace

void dequantize_fp8(CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block) {
  dequantize<false>("dequantize_fp8", q, scales, x, n, block);
}
void dequantize_fp8_bf16(CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block) {
  dequantize<true>("dequantize_fp8_bf16", q, scales, x, n, block);
}

}  // namespace zeropp
