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

#include "kernels/cuda/quant_device.cuh"
#include "kernels/cuda/quantize.cuh"
#include "kernels/quant/quant_ref.hpp"

namespace zeropp::cuda {

namespace {

using namespace quant_device;

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

// Vector path: acc[j] = deq_0 + deq_1 + ... (left to right) for the lane's n4
// float4. The packed words and scales of kChunkBatch chunks are all loaded
// before any is added, so a warp has that many loads in flight instead of one
// chunk's latency at a time; the sum's order is unchanged.
constexpr int kChunkBatch = 4;
template <int Bits>
__device__ __forceinline__ void sum_vec(const S<Bits>* q_in, const float* scales_in, int k, int64_t n,
                                        int64_t b, int n4, int lane, float4 (&acc)[kMaxVec]) {
  const int64_t block = int64_t(n4) * 128, nb = n / block, cb = Fmt<Bits>::bytes(n);
  for (int c0 = 0; c0 < k; c0 += kChunkBatch) {
    uint32_t w[kChunkBatch][kMaxVec];
    float sc[kChunkBatch];
#pragma unroll
    for (int u = 0; u < kChunkBatch; ++u) {
      const int c = c0 + u < k ? c0 + u : k - 1;  // past k: a harmless reload, never added
      sc[u] = scales_in[c * nb + b];
#pragma unroll
      for (int j = 0; j < kMaxVec; ++j)
        if (j < n4) w[u][j] = word4<Bits>(q_in + c * cb, b * block + int64_t(j * 32 + lane) * 4);
    }
#pragma unroll
    for (int u = 0; u < kChunkBatch; ++u)
      if (c0 + u < k)
#pragma unroll
        for (int j = 0; j < kMaxVec; ++j)
          if (j < n4) {
            const float4 d = deq_word4<Bits>(w[u][j], sc[u]);
            acc[j] = c0 + u == 0 ? d : add4(acc[j], d);
          }
  }
}

// Generic path: the sum at element i of block b (chunks unrolled by four, so
// their independent loads issue together; the adds stay in chunk order).
template <int Bits>
__device__ __forceinline__ float sum_one(const S<Bits>* q_in, const float* scales_in, int k, int64_t n,
                                         int64_t block, int64_t b, int64_t i) {
  const int64_t nb = n / block, cb = Fmt<Bits>::bytes(n);
  float s = deq1(elem<Bits>(q_in, i), scales_in[b]);
#pragma unroll 4
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
