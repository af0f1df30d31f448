// CUDA quantization kernels (kernels/cuda/quantize.cuh documents the contract).
//
// Every kernel runs one warp per quantization block (8 warps per CTA of 256
// threads); the vector path (block = 128*n4, n4 <= 8, aligned pointers) keeps
// the block in registers as n4 float4 per lane, the generic path loops over the
// block with scalar accesses and re-reads it (from L1) instead of keeping it.
// All fp32 arithmetic goes through the _rn intrinsics: no FMA contraction, no
// approximate division, denormals kept (this file must not be compiled with
// --use_fast_math or -ftz=true, which would change the bits).
#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/cuda/bf16.cuh"
#include "kernels/cuda/quantize.cuh"
#include "kernels/quant_ref.hpp"

namespace zeropp::cuda {

namespace {

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
  float scale, pre, inv;  // as kernels/quantize.hpp: inv = 0 means every q = 0
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
// rounded to the nearest bf16 (kernels/quantize.hpp); x is read only to add
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

// Elements e..e+3 (e a multiple of 4) dequantized with one scale.
template <int Bits>
__device__ __forceinline__ float4 deq4(const S<Bits>* q, int64_t e, float sc) {
  uint32_t w;
  int32_t a[4];
  if constexpr (Bits == 8) {
    w = *reinterpret_cast<const uint32_t*>(q + e);
#pragma unroll
    for (int t = 0; t < 4; ++t) a[t] = int32_t(w << (24 - 8 * t)) >> 24;
  } else {
    w = *reinterpret_cast<const uint16_t*>(q + e / 2);
#pragma unroll
    for (int t = 0; t < 4; ++t) a[t] = int32_t(w << (28 - 4 * t)) >> 28;
  }
  return make_float4(deq1(a[0], sc), deq1(a[1], sc), deq1(a[2], sc), deq1(a[3], sc));
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

// --- quantize ----------------------------------------------------------------

template <int Bits>
__global__ void __launch_bounds__(kThreads)
    quantize_vec(const float* __restrict__ x, S<Bits>* __restrict__ q, float* __restrict__ scales,
                 int64_t nblocks, int n4, Remap remap) {
  const int64_t b = warp_index();
  if (b >= nblocks) return;  // uniform over the warp
  const int lane = threadIdx.x & 31;
  const int64_t block = int64_t(n4) * 128;
  const float4* xb = reinterpret_cast<const float4*>(x + remap.src(b * block));
  float4 v[kMaxVec];
  uint32_t m = 0;
#pragma unroll
  for (int j = 0; j < kMaxVec; ++j)
    if (j < n4) {
      v[j] = xb[j * 32 + lane];
      m = max(m, absbits4(v[j]));
    }
  m = __reduce_max_sync(0xffffffffu, m);
  const Params p = block_params(m, Fmt<Bits>::kQmax);
  if (lane == 0) scales[b] = p.scale;
#pragma unroll
  for (int j = 0; j < kMaxVec; ++j)
    if (j < n4) quant4<Bits>(q, b * block + int64_t(j * 32 + lane) * 4, v[j], p);
}

template <int Bits>
__global__ void __launch_bounds__(kThreads)
    quantize_generic(const float* __restrict__ x, S<Bits>* __restrict__ q, float* __restrict__ scales,
                     int64_t nblocks, int64_t block, Remap remap) {
  const int64_t b = warp_index();
  if (b >= nblocks) return;
  const int lane = threadIdx.x & 31;
  const float* xb = x + remap.src(b * block);
  uint32_t m = 0;
  for (int64_t i = lane; i < block; i += 32) m = max(m, absbits(xb[i]));
  m = __reduce_max_sync(0xffffffffu, m);
  const Params p = block_params(m, Fmt<Bits>::kQmax);
  if (lane == 0) scales[b] = p.scale;
  quant_generic_store<Bits>(q + Fmt<Bits>::bytes(b * block), block, lane, p,
                            [&](int64_t i) { return xb[i]; });
}

// --- dequantize ----------------------------------------------------------------

template <int Bits, Mode M>
__global__ void __launch_bounds__(kThreads)
    dequantize_vec(const S<Bits>* __restrict__ q, const float* __restrict__ scales, float* __restrict__ x,
                   int64_t nblocks, int n4) {
  const int64_t b = warp_index();
  if (b >= nblocks) return;
  const int lane = threadIdx.x & 31;
  const int64_t block = int64_t(n4) * 128;
  const float sc = scales[b];
  float4* xb = reinterpret_cast<float4*>(x + b * block);
#pragma unroll
  for (int j = 0; j < kMaxVec; ++j)
    if (j < n4) {
      const float4 d = deq4<Bits>(q, b * block + int64_t(j * 32 + lane) * 4, sc);
      xb[j * 32 + lane] = deq_store4<M>(xb[j * 32 + lane], d);
    }
}

template <int Bits, Mode M>
__global__ void __launch_bounds__(kThreads)
    dequantize_generic(const S<Bits>* __restrict__ q, const float* __restrict__ scales, float* __restrict__ x,
                       int64_t nblocks, int64_t block) {
  const int64_t b = warp_index();
  if (b >= nblocks) return;
  const int lane = threadIdx.x & 31;
  const float sc = scales[b];
  for (int64_t i = b * block + lane; i < (b + 1) * block; i += 32) {
    const float d = deq1(elem<Bits>(q, i), sc);
    x[i] = deq_store<M>(x[i], d);
  }
}

// --- sums over k chunks --------------------------------------------------------

// Vector path: acc[j] = deq_0 + deq_1 + ... (left to right) for the lane's n4 float4.
template <int Bits>
__device__ __forceinline__ void sum_vec(const S<Bits>* q_in, const float* scales_in, int k, int64_t n,
                                        int64_t b, int n4, int lane, float4 (&acc)[kMaxVec]) {
  const int64_t block = int64_t(n4) * 128, nb = n / block, cb = Fmt<Bits>::bytes(n);
  for (int c = 0; c < k; ++c) {
    const S<Bits>* qc = q_in + c * cb;
    const float sc = scales_in[c * nb + b];
#pragma unroll
    for (int j = 0; j < kMaxVec; ++j)
      if (j < n4) {
        const float4 d = deq4<Bits>(qc, b * block + int64_t(j * 32 + lane) * 4, sc);
        acc[j] = c == 0 ? d : add4(acc[j], d);
      }
  }
}

// Generic path: the sum at element i of block b.
template <int Bits>
__device__ __forceinline__ float sum_one(const S<Bits>* q_in, const float* scales_in, int k, int64_t n,
                                         int64_t block, int64_t b, int64_t i) {
  const int64_t nb = n / block, cb = Fmt<Bits>::bytes(n);
  float s = deq1(elem<Bits>(q_in, i), scales_in[b]);
  for (int c = 1; c < k; ++c) s = __fadd_rn(s, deq1(elem<Bits>(q_in + c * cb, i), scales_in[c * nb + b]));
  return s;
}

template <int Bits>
__global__ void __launch_bounds__(kThreads)
    dequant_sum_vec(const S<Bits>* __restrict__ q_in, const float* __restrict__ scales_in, int k,
                    float* __restrict__ out, int64_t n, int n4) {
  const int64_t block = int64_t(n4) * 128, b = warp_index();
  if (b >= n / block) return;
  const int lane = threadIdx.x & 31;
  float4 acc[kMaxVec] = {};
  sum_vec<Bits>(q_in, scales_in, k, n, b, n4, lane, acc);
  float4* ob = reinterpret_cast<float4*>(out + b * block);
#pragma unroll
  for (int j = 0; j < kMaxVec; ++j)
    if (j < n4) ob[j * 32 + lane] = acc[j];
}

template <int Bits>
__global__ void __launch_bounds__(kThreads)
    dequant_sum_generic(const S<Bits>* __restrict__ q_in, const float* __restrict__ scales_in, int k,
                        float* __restrict__ out, int64_t n, int64_t block) {
  const int64_t b = warp_index();
  if (b >= n / block) return;
  const int lane = threadIdx.x & 31;
  for (int64_t i = b * block + lane; i < (b + 1) * block; i += 32)
    out[i] = sum_one<Bits>(q_in, scales_in, k, n, block, b, i);
}

template <int InBits, int OutBits>
__global__ void __launch_bounds__(kThreads)
    requant_vec(const S<InBits>* __restrict__ q_in, const float* __restrict__ scales_in, int k,
                S<OutBits>* __restrict__ q_out, float* __restrict__ scales_out, int64_t n, int n4) {
  const int64_t block = int64_t(n4) * 128, b = warp_index();
  if (b >= n / block) return;
  const int lane = threadIdx.x & 31;
  float4 acc[kMaxVec] = {};
  sum_vec<InBits>(q_in, scales_in, k, n, b, n4, lane, acc);
  uint32_t m = 0;
#pragma unroll
  for (int j = 0; j < kMaxVec; ++j)
    if (j < n4) m = max(m, absbits4(acc[j]));
  m = __reduce_max_sync(0xffffffffu, m);
  const Params p = block_params(m, Fmt<OutBits>::kQmax);
  if (lane == 0) scales_out[b] = p.scale;
#pragma unroll
  for (int j = 0; j < kMaxVec; ++j)
    if (j < n4) quant4<OutBits>(q_out, b * block + int64_t(j * 32 + lane) * 4, acc[j], p);
}

// Two passes over the block, recomputing the (deterministic) sum in the second.
template <int InBits, int OutBits>
__global__ void __launch_bounds__(kThreads)
    requant_generic(const S<InBits>* __restrict__ q_in, const float* __restrict__ scales_in, int k,
                    S<OutBits>* __restrict__ q_out, float* __restrict__ scales_out, int64_t n,
                    int64_t block) {
  const int64_t b = warp_index();
  if (b >= n / block) return;
  const int lane = threadIdx.x & 31;
  const int64_t base = b * block;
  auto value = [&](int64_t i) { return sum_one<InBits>(q_in, scales_in, k, n, block, b, base + i); };
  uint32_t m = 0;
  for (int64_t i = lane; i < block; i += 32) m = max(m, absbits(value(i)));
  m = __reduce_max_sync(0xffffffffu, m);
  const Params p = block_params(m, Fmt<OutBits>::kQmax);
  if (lane == 0) scales_out[b] = p.scale;
  quant_generic_store<OutBits>(q_out + Fmt<OutBits>::bytes(base), block, lane, p, value);
}

// --- host side -----------------------------------------------------------------

bool aligned(const void* p, uintptr_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

// n4 for the vector path, or 0 for the generic one.
int vec_width(int64_t block, std::initializer_list<std::pair<const void*, uintptr_t>> ptrs) {
  if (block % 128 != 0 || block > 128 * kMaxVec) return 0;
  for (const auto& [p, a] : ptrs)
    if (!aligned(p, a)) return 0;
  return int(block / 128);
}

template <int Bits>
constexpr uintptr_t q_align() {
  return Bits == 8 ? 4 : 2;
}

dim3 grid_for(const char* who, int64_t nblocks) {
  const int64_t ctas = (nblocks + kWarpsPerCta - 1) / kWarpsPerCta;
  if (ctas > int64_t(0x7fffffff))
    throw std::invalid_argument(std::string(who) + ": too many blocks for one grid");
  return dim3(unsigned(ctas));
}

void check_launch(const char* who) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(who) + ": kernel launch failed: " + cudaGetErrorName(e) + " (" +
                             cudaGetErrorString(e) + ")");
}

void check_k(const char* who, int k) {
  if (k < 1)
    throw std::invalid_argument(std::string(who) + ": k must be at least 1, not " + std::to_string(k));
}

template <int Bits>
void quantize_launch(const char* who, const float* x, S<Bits>* q, float* scales, int64_t n, int64_t block,
                     Remap remap, cudaStream_t stream) {
  quant_ref::check_shape(who, Bits, n, block);
  if (n == 0) return;
  const int64_t nb = n / block;
  const dim3 grid = grid_for(who, nb);
  if (const int n4 = vec_width(block, {{x, 16}, {q, q_align<Bits>()}}))
    quantize_vec<Bits><<<grid, kThreads, 0, stream>>>(x, q, scales, nb, n4, remap);
  else
    quantize_generic<Bits><<<grid, kThreads, 0, stream>>>(x, q, scales, nb, block, remap);
  check_launch(who);
}

template <int Bits, Mode M>
void dequantize_launch(const char* who, const S<Bits>* q, const float* scales, float* x, int64_t n,
                       int64_t block, cudaStream_t stream) {
  quant_ref::check_shape(who, Bits, n, block);
  if (n == 0) return;
  const int64_t nb = n / block;
  const dim3 grid = grid_for(who, nb);
  if (const int n4 = vec_width(block, {{x, 16}, {q, q_align<Bits>()}}))
    dequantize_vec<Bits, M><<<grid, kThreads, 0, stream>>>(q, scales, x, nb, n4);
  else
    dequantize_generic<Bits, M><<<grid, kThreads, 0, stream>>>(q, scales, x, nb, block);
  check_launch(who);
}

template <int Bits>
void dequant_sum_launch(const char* who, const S<Bits>* q_in, const float* scales_in, int k, float* out,
                        int64_t n, int64_t block, cudaStream_t stream) {
  check_k(who, k);
  quant_ref::check_shape(who, Bits, n, block);
  if (n == 0) return;
  const dim3 grid = grid_for(who, n / block);
  if (const int n4 = vec_width(block, {{out, 16}, {q_in, q_align<Bits>()}}))
    dequant_sum_vec<Bits><<<grid, kThreads, 0, stream>>>(q_in, scales_in, k, out, n, n4);
  else
    dequant_sum_generic<Bits><<<grid, kThreads, 0, stream>>>(q_in, scales_in, k, out, n, block);
  check_launch(who);
}

template <int InBits, int OutBits>
void requant_launch(const char* who, const S<InBits>* q_in, const float* scales_in, int k, S<OutBits>* q_out,
                    float* scales_out, int64_t n, int64_t block, cudaStream_t stream) {
  check_k(who, k);
  quant_ref::check_shape(who, InBits, n, block);
  quant_ref::check_shape(who, OutBits, n, block);
  if (n == 0) return;
  const dim3 grid = grid_for(who, n / block);
  if (const int n4 = vec_width(block, {{q_in, q_align<InBits>()}, {q_out, q_align<OutBits>()}}))
    requant_vec<InBits, OutBits><<<grid, kThreads, 0, stream>>>(q_in, scales_in, k, q_out, scales_out, n, n4);
  else
    requant_generic<InBits, OutBits>
        <<<grid, kThreads, 0, stream>>>(q_in, scales_in, k, q_out, scales_out, n, block);
  check_launch(who);
}

}  // namespace

void quantize_int8(const float* x, int8_t* q, float* scales, int64_t n, int64_t block, cudaStream_t stream) {
  quantize_launch<8>("cuda::quantize_int8", x, q, scales, n, block, Remap{}, stream);
}
void quantize_int4(const float* x, uint8_t* q, float* scales, int64_t n, int64_t block, cudaStream_t stream) {
  quantize_launch<4>("cuda::quantize_int4", x, q, scales, n, block, Remap{}, stream);
}
void dequantize_int8(const int8_t* q, const float* scales, float* x, int64_t n, int64_t block,
                     cudaStream_t stream) {
  dequantize_launch<8, Mode::Set>("cuda::dequantize_int8", q, scales, x, n, block, stream);
}
void dequantize_int8_add(const int8_t* q, const float* scales, float* x, int64_t n, int64_t block,
                         cudaStream_t stream) {
  dequantize_launch<8, Mode::Add>("cuda::dequantize_int8_add", q, scales, x, n, block, stream);
}
void dequantize_int4(const uint8_t* q, const float* scales, float* x, int64_t n, int64_t block,
                     cudaStream_t stream) {
  dequantize_launch<4, Mode::Set>("cuda::dequantize_int4", q, scales, x, n, block, stream);
}
void dequantize_int4_add(const uint8_t* q, const float* scales, float* x, int64_t n, int64_t block,
                         cudaStream_t stream) {
  dequantize_launch<4, Mode::Add>("cuda::dequantize_int4_add", q, scales, x, n, block, stream);
}

void dequantize_bf16(int bits, const void* q, const float* scales, float* x, int64_t n, int64_t block,
                     cudaStream_t stream) {
  const char* who = "cuda::dequantize_bf16";
  if (bits == 8)
    dequantize_launch<8, Mode::RoundBF16>(who, static_cast<const int8_t*>(q), scales, x, n, block, stream);
  else
    dequantize_launch<4, Mode::RoundBF16>(who, static_cast<const uint8_t*>(q), scales, x, n, block, stream);
}

void qgz_reorder_quantize(int bits, const float* grad, void* q, float* scales, int64_t n, int X, int Y,
                          int64_t block, cudaStream_t stream) {
  const char* who = "cuda::qgz_reorder_quantize";
  quant_ref::check_shape(who, bits, n, block);
  if (X < 1 || Y < 1 || n % (int64_t(X) * Y) != 0 || (n / (int64_t(X) * Y)) % block != 0)
    throw std::invalid_argument(std::string(who) + ": n = " + std::to_string(n) +
                                " must be X*Y*s with s a multiple of block (X = " + std::to_string(X) +
                                ", Y = " + std::to_string(Y) + ", block = " + std::to_string(block) + ")");
  Remap r;
  r.X = X;
  r.s = n / (int64_t(X) * Y);
  r.chunk = int64_t(Y) * r.s;
  if (bits == 8)
    quantize_launch<8>(who, grad, static_cast<int8_t*>(q), scales, n, block, r, stream);
  else
    quantize_launch<4>(who, grad, static_cast<uint8_t*>(q), scales, n, block, r, stream);
}

void dequant_sum_requant_int4(const uint8_t* q_in, const float* scales_in, int k, uint8_t* q_out,
                              float* scales_out, int64_t n, int64_t block, cudaStream_t stream) {
  requant_launch<4, 4>("cuda::dequant_sum_requant_int4", q_in, scales_in, k, q_out, scales_out, n, block,
                       stream);
}
void dequant_sum_requant_int8(const int8_t* q_in, const float* scales_in, int k, int8_t* q_out,
                              float* scales_out, int64_t n, int64_t block, cudaStream_t stream) {
  requant_launch<8, 8>("cuda::dequant_sum_requant_int8", q_in, scales_in, k, q_out, scales_out, n, block,
                       stream);
}
void dequant_sum_requant_int8_to_int4(const int8_t* q_in, const float* scales_in, int k, uint8_t* q_out,
                                      float* scales_out, int64_t n, int64_t block, cudaStream_t stream) {
  requant_launch<8, 4>("cuda::dequant_sum_requant_int8_to_int4", q_in, scales_in, k, q_out, scales_out, n,
                       block, stream);
}
void dequant_sum_requant_int4_to_int8(const uint8_t* q_in, const float* scales_in, int k, int8_t* q_out,
                                      float* scales_out, int64_t n, int64_t block, cudaStream_t stream) {
  requant_launch<4, 8>("cuda::dequant_sum_requant_int4_to_int8", q_in, scales_in, k, q_out, scales_out, n,
                       block, stream);
}
void dequant_sum_int4(const uint8_t* q_in, const float* scales_in, int k, float* out, int64_t n,
                      int64_t block, cudaStream_t stream) {
  dequant_sum_launch<4>("cuda::dequant_sum_int4", q_in, scales_in, k, out, n, block, stream);
}
void dequant_sum_int8(const int8_t* q_in, const float* scales_in, int k, float* out, int64_t n, int64_t block,
                      cudaStream_t stream) {
  dequant_sum_launch<8>("cuda::dequant_sum_int8", q_in, scales_in, k, out, n, block, stream);
}

}  // namespace zeropp::cuda
