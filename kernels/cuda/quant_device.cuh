// The quantization kernels' per-element and per-word device helpers
// (kernels/cuda/quantize.cu's kernels are built from them): the formats, a
// block's scale, quantizing and dequantizing one element or one packed word of
// four, the qgZ reorder's index map. All fp32 arithmetic goes through the _rn
// intrinsics (no FMA contraction, no approximate division, denormals kept):
// bit for bit kernels/quant/quant_ref.hpp. Included by quantize.cu and quant_fp8.cu only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/cuda/bf16.cuh"
#include "kernels/quant/quant_ref.hpp"

namespace zeropp::cuda::quant_device {

constexpr int kThreads = 256;
constexpr int kWarpsPerCta = kThreads / 32;
constexpr int kMaxVec = 8;  // float4 per lane on the vector path: block <= 1024

template <int Bits>
struct Fmt;
template <>
struct Fmt<8> {
  using S = int8_t;
  static constexpr int kQmax = 127;
  __host__ __device__ static constexpr int64_t bytes(int64_t n) { return quant_ref::payload_bytes(8, n); }
};
template <>
struct Fmt<4> {
  using S = uint8_t;
  static constexpr int kQmax = 7;
  __host__ __device__ static constexpr int64_t bytes(int64_t n) { return quant_ref::payload_bytes(4, n); }
};
template <int Bits>
using S = typename Fmt<Bits>::S;

constexpr uint32_t kNonFiniteBits = 0x7f800000u;  // +Inf; every NaN is above it
constexpr uint32_t kQuietNaNBits = 0x7fc00000u;
constexpr uint32_t kTinyBits = 0x1f800000u;          // 2^-64
constexpr float kTinyPre = 18446744073709551616.0f;  // 2^64

struct Params {
  float scale, pre, inv;  // as kernels/quant/quantize.hpp: inv = 0 means every q = 0
};

__device__ __forceinline__ uint32_t absbits(float f) { return __float_as_uint(f) & 0x7fffffffu; }
__device__ __forceinline__ uint32_t absbits4(float4 v) {
  return max(max(absbits(v.x), absbits(v.y)), max(absbits(v.z), absbits(v.w)));
}

// m = max |x_i| as bits (sign cleared), reduced over the warp by the caller.
__device__ __forceinline__ Params block_params(uint32_t mbits, int qmax) {
  const float Q = float(qmax);
  if (mbits == 0) return {0.0f, 1.0f, 0.0f};
  if (mbits >= kNonFiniteBits) return {__uint_as_float(kQuietNaNBits), 1.0f, 0.0f};
  const float m = __uint_as_float(mbits);
  const float pre = mbits < kTinyBits ? kTinyPre : 1.0f;
  float scale = __fdiv_rn(m, Q);
  if (__float_as_uint(__fmul_rn(scale, Q)) >= kNonFiniteBits)
    scale = __uint_as_float(__float_as_uint(scale) - 1u);
  return {scale, pre, __fdiv_rn(Q, __fmul_rn(m, pre))};
}

// round-half-even(clamp((x * pre) * inv, -Q, Q)), 0 for zero/non-finite blocks.
template <int Bits>
__device__ __forceinline__ int32_t quant1(float x, const Params& p) {
  if (p.inv == 0.0f) return 0;
  const float Q = float(Fmt<Bits>::kQmax);
  return __float2int_rn(fminf(fmaxf(__fmul_rn(__fmul_rn(x, p.pre), p.inv), -Q), Q));
}

__device__ __forceinline__ float deq1(int32_t v, float scale) { return __fmul_rn(float(v), scale); }

// The new value of an element x given its dequantized value d: d, x + d, or d
// rounded to the nearest bf16 (kernels/quant/quantize.hpp); x is read only to add
// (the compiler drops the unused load).
enum class Mode { Set, Add, RoundBF16 };
template <Mode M>
__device__ __forceinline__ float deq_store(float x, float d) {
  if constexpr (M == Mode::Add) return __fadd_rn(x, d);
  if constexpr (M == Mode::RoundBF16) return detail::bf16_bits_to_fp32(detail::fp32_to_bf16_bits(d));
  return d;
}
template <Mode M>
__device__ __forceinline__ float4 deq_store4(float4 x, float4 d) {
  return make_float4(deq_store<M>(x.x, d.x), deq_store<M>(x.y, d.y), deq_store<M>(x.z, d.z),
                     deq_store<M>(x.w, d.w));
}
__device__ __forceinline__ float4 add4(float4 a, float4 b) {
  return make_float4(__fadd_rn(a.x, b.x), __fadd_rn(a.y, b.y), __fadd_rn(a.z, b.z), __fadd_rn(a.w, b.w));
}

// Element i of a quantized buffer.
template <int Bits>
__device__ __forceinline__ int32_t elem(const S<Bits>* q, int64_t i) {
  if constexpr (Bits == 8) {
    return q[i];
  } else {
    const uint32_t b = q[i >> 1];
    return (i & 1) ? int32_t(b << 24) >> 28 : int32_t(b << 28) >> 28;
  }
}

// The packed word of elements e..e+3 (e a multiple of 4), and those elements
// dequantized with one scale.
template <int Bits>
__device__ __forceinline__ uint32_t word4(const S<Bits>* q, int64_t e) {
  if constexpr (Bits == 8)
    return *reinterpret_cast<const uint32_t*>(q + e);
  else
    return *reinterpret_cast<const uint16_t*>(q + e / 2);
}
template <int Bits>
__device__ __forceinline__ float4 deq_word4(uint32_t w, float sc) {
  int32_t a[4];
#pragma unroll
  for (int t = 0; t < 4; ++t)
    a[t] = Bits == 8 ? int32_t(w << (24 - 8 * t)) >> 24 : int32_t(w << (28 - 4 * t)) >> 28;
  return make_float4(deq1(a[0], sc), deq1(a[1], sc), deq1(a[2], sc), deq1(a[3], sc));
}
template <int Bits>
__device__ __forceinline__ float4 deq4(const S<Bits>* q, int64_t e, float sc) {
  return deq_word4<Bits>(word4<Bits>(q, e), sc);
}

// Quantizes v (elements e..e+3) into q.
template <int Bits>
__device__ __forceinline__ void quant4(S<Bits>* q, int64_t e, float4 v, const Params& p) {
  const int32_t a = quant1<Bits>(v.x, p), b = quant1<Bits>(v.y, p), c = quant1<Bits>(v.z, p),
                d = quant1<Bits>(v.w, p);
  if constexpr (Bits == 8) {
    *reinterpret_cast<uint32_t*>(q + e) =
        uint32_t(a & 0xff) | uint32_t(b & 0xff) << 8 | uint32_t(c & 0xff) << 16 | uint32_t(d & 0xff) << 24;
  } else {
    *reinterpret_cast<uint16_t*>(q + e / 2) = uint16_t(uint32_t(a & 0xf) | uint32_t(b & 0xf) << 4 |
                                                       uint32_t(c & 0xf) << 8 | uint32_t(d & 0xf) << 12);
  }
}

// Generic path: element pair t (int4: one byte) or element t (int8) of a block.
template <int Bits, class F>
__device__ __forceinline__ void quant_generic_store(S<Bits>* qb, int64_t block, int lane, const Params& p,
                                                    F value) {
  if constexpr (Bits == 8) {
    for (int64_t i = lane; i < block; i += 32) qb[i] = int8_t(quant1<8>(value(i), p));
  } else {
    for (int64_t t = lane; t < block / 2; t += 32)
      qb[t] = uint8_t((quant1<4>(value(2 * t), p) & 0xf) | ((quant1<4>(value(2 * t + 1), p) & 0xf) << 4));
  }
}

// Source of output position pos for the qgZ reorder (identity when X = 1).
struct Remap {
  int X = 1;
  int64_t s = 1, chunk = 1;
  __device__ __forceinline__ int64_t src(int64_t pos) const {
    if (X == 1) return pos;
    const int64_t x = pos / chunk, rem = pos - x * chunk, y = rem / s;
    return (y * X + x) * s + (rem - y * s);
  }
};

__device__ __forceinline__ int64_t warp_index() {
  return (int64_t(blockIdx.x) * kThreads + threadIdx.x) >> 5;
}

// Throws std::runtime_error naming `who` if the last launch failed.
inline void check_launch(const char* who) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(who) + ": kernel launch failed: " + cudaGetErrorName(e) + " (" +
                             cudaGetErrorString(e) + ")");
}

}  // namespace zeropp::cuda::quant_device
