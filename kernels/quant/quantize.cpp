#include "kernels/quant/quantize.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/quant/quant_isa.hpp"
#include "kernels/quant/quant_ref.hpp"
#include "kernels/runtime/cpu_features.hpp"
#include "kernels/runtime/device_context.hpp"

#ifdef ZEROPP_HAVE_CUDA
#include "kernels/cuda/quantize.cuh"
#endif

namespace zeropp {

void check_quant_args(const char* who, int bits, int64_t n, int64_t block, int64_t x_size, int64_t q_size,
                      int64_t scales_size) {
  require_quant_isa(who);
  quant_ref::check_shape(who, bits, n, block);
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument(std::string(who) + ": " + why + " (n = " + std::to_string(n) +
                                ", block = " + std::to_string(block) + ")");
  };
  const int64_t bytes = quant_ref::payload_bytes(bits, n);
  if (x_size < n) fail("the fp32 view holds " + std::to_string(x_size) + " elements, fewer than n");
  if (q_size < bytes)
    fail("the quantized view holds " + std::to_string(q_size) + " bytes, needs " + std::to_string(bytes));
  if (scales_size < n / block)
    fail("the scales view holds " + std::to_string(scales_size) +
         " floats, needs n/block = " + std::to_string(n / block));
}

namespace {

// Calls f(b0, nb) over [0, nblocks) in groups of kQuantBlocksPerCall blocks.
template <class F>
void for_block_groups(const char* who, int64_t nblocks, const F& f) {
  constexpr int64_t G = kQuantBlocksPerCall;
  Kokkos::parallel_for(
      who, Range(0, (nblocks + G - 1) / G), KOKKOS_LAMBDA(const int64_t g) {
        const int64_t b0 = g * G;
        f(b0, nblocks - b0 < G ? nblocks - b0 : G);
      });
}

#ifdef ZEROPP_HAVE_CUDA
// The CUDA twin (kernels/cuda/quantize.cuh) of dequantize<Bits, Mode>.
template <int Bits, DequantMode Mode>
void dequantize_on_device(const typename QuantFormat<Bits>::Storage* q, const float* scales, float* x,
                          int64_t n, int64_t block, cudaStream_t stream) {
  if constexpr (Mode == DequantMode::RoundBF16)
    cuda::dequantize_bf16(Bits, q, scales, x, n, block, stream);
  else
    by_bits<Bits>(Mode == DequantMode::Add ? cuda::dequantize_int8_add : cuda::dequantize_int8,
                  Mode == DequantMode::Add ? cuda::dequantize_int4_add : cuda::dequantize_int4)(
        q, scales, x, n, block, stream);
}
#endif

template <int Bits>
void quantize(const char* who, CVec<float> x, Vec<typename QuantFormat<Bits>::Storage> q, Vec<float> scales,
              int64_t n, int64_t block) {
  check_quant_args(who, Bits, n, block, x.extent(0), q.extent(0), scales.extent(0));
  ZEROPP_ON_DEVICE(float, "quantize",
                   by_bits<Bits>(cuda::quantize_int8, cuda::quantize_int4)(x.data(), q.data(), scales.data(),
                                                                           n, block, ZD->stream));
  const float* px = x.data();
  auto* pq = q.data();
  float* ps = scales.data();
  const QuantIsaKernels& k = quant_kernels();
  for_block_groups(who, n / block, [&](int64_t b0, int64_t nb) {
    auto* qb = pq + QuantFormat<Bits>::bytes(b0 * block);
    if constexpr (Bits == 8)
      k.quantize8(px + b0 * block, qb, ps + b0, nb, block);
    else
      k.quantize4(px + b0 * block, qb, ps + b0, nb, block);
  });
}

template <int Bits, DequantMode Mode>
void dequantize(const char* who, CVec<typename QuantFormat<Bits>::Storage> q, CVec<float> scales,
                Vec<float> x, int64_t n, int64_t block) {
  check_quant_args(who, Bits, n, block, x.extent(0), q.extent(0), scales.extent(0));
  ZEROPP_ON_DEVICE(
      float, "dequantize",
      (dequantize_on_device<Bits, Mode>(q.data(), scales.data(), x.data(), n, block, ZD->stream)));
  const auto* pq = q.data();
  const float* ps = scales.data();
  float* px = x.data();
  const QuantIsaKernels& k = quant_kernels();
  for_block_groups(who, n / block, [&](int64_t b0, int64_t nb) {
    const auto* qb = pq + QuantFormat<Bits>::bytes(b0 * block);
    if constexpr (Bits == 8)
      k.dequantize8[int(Mode)](qb, ps + b0, px + b0 * block, nb, block);
    else
      k.dequantize4[int(Mode)](qb, ps + b0, px + b0 * block, nb, block);
  });
}

// --- references: plain loops, one element at a time (kernels/quant/quant_ref.hpp) --

template <int Bits>
void quantize_reference(const char* who, CVec<float> x, Vec<typename QuantFormat<Bits>::Storage> q,
                        Vec<float> scales, int64_t n, int64_t block) {
  check_quant_args(who, Bits, n, block, x.extent(0), q.extent(0), scales.extent(0));
  quant_ref::quantize<Bits>(x.data(), q.data(), scales.data(), n, block);
}

template <int Bits, DequantMode Mode>
void dequantize_reference(const char* who, CVec<typename QuantFormat<Bits>::Storage> q, CVec<float> scales,
                          Vec<float> x, int64_t n, int64_t block) {
  check_quant_args(who, Bits, n, block, x.extent(0), q.extent(0), scales.extent(0));
  if constexpr (Mode == DequantMode::RoundBF16)
    quant_ref::dequantize_bf16<Bits>(q.data(), scales.data(), x.data(), n, block);
  else
    quant_ref::dequantize<Bits, Mode == DequantMode::Add>(q.data(), scales.data(), x.data(), n, block);
}

}  // namespace

void quantize_int8(CVec<float> x, Vec<int8_t> q, Vec<float> scales, int64_t n, int64_t block) {
  quantize<8>("quantize_int8", x, q, scales, n, block);
}
void dequantize_int8(CVec<int8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block) {
  dequantize<8, DequantMode::Set>("dequantize_int8", q, scales, x, n, block);
}
void dequantize_int8_add(CVec<int8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block) {
  dequantize<8, DequantMode::Add>("dequantize_int8_add", q, scales, x, n, block);
}
void quantize_int4(CVec<float> x, Vec<uint8_t> q, Vec<float> scales, int64_t n, int64_t block) {
  quantize<4>("quantize_int4", x, q, scales, n, block);
}
void dequantize_int4(CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block) {
  dequantize<4, DequantMode::Set>("dequantize_int4", q, scales, x, n, block);
}
void dequantize_int4_add(CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block) {
  dequantize<4, DequantMode::Add>("dequantize_int4_add", q, scales, x, n, block);
}

void dequantize_int8_bf16(CVec<int8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block) {
  dequantize<8, DequantMode::RoundBF16>("dequantize_int8_bf16", q, scales, x, n, block);
}
void dequantize_int4_bf16(CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block) {
  dequantize<4, DequantMode::RoundBF16>("dequantize_int4_bf16", q, scales, x, n, block);
}

void quantize_int8_reference(CVec<float> x, Vec<int8_t> q, Vec<float> scales, int64_t n, int64_t block) {
  quantize_reference<8>("quantize_int8_reference", x, q, scales, n, block);
}
void dequantize_int8_reference(CVec<int8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block) {
  dequantize_reference<8, DequantMode::Set>("dequantize_int8_reference", q, scales, x, n, block);
}
void dequantize_int8_add_reference(CVec<int8_t> q, CVec<float> scales, Vec<float> x, int64_t n,
                                   int64_t block) {
  dequantize_reference<8, DequantMode::Add>("dequantize_int8_add_reference", q, scales, x, n, block);
}
void quantize_int4_reference(CVec<float> x, Vec<uint8_t> q, Vec<float> scales, int64_t n, int64_t block) {
  quantize_reference<4>("quantize_int4_reference", x, q, scales, n, block);
}
void dequantize_int4_reference(CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n, int64_t block) {
  dequantize_reference<4, DequantMode::Set>("dequantize_int4_reference", q, scales, x, n, block);
}
void dequantize_int4_add_reference(CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n,
                                   int64_t block) {
  dequantize_reference<4, DequantMode::Add>("dequantize_int4_add_reference", q, scales, x, n, block);
}

void dequantize_int8_bf16_reference(CVec<int8_t> q, CVec<float> scales, Vec<float> x, int64_t n,
                                    int64_t block) {
  dequantize_reference<8, DequantMode::RoundBF16>("dequantize_int8_bf16_reference", q, scales, x, n, block);
}
void dequantize_int4_bf16_reference(CVec<uint8_t> q, CVec<float> scales, Vec<float> x, int64_t n,
                                    int64_t block) {
  dequantize_reference<4, DequantMode::RoundBF16>("dequantize_int4_bf16_reference", q, scales, x, n, block);
}

}  // namespace zeropp
