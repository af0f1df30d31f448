// The plain-loop references of the quantization kernels, on raw pointers.
//
// Pure C++17 (no Kokkos, no MPI, no CUDA): the single definition of the
// reference arithmetic that kernels/quant/quantize.hpp documents. kernels/quant/quantize.cpp
// and kernels/quant/quant_reduce.cpp wrap these for Kokkos Views (their *_reference
// functions), and tools/gpu_check includes this header directly to check the
// CUDA kernels (kernels/cuda/quantize.cuh) against the same code.
//
// Formats, scale arithmetic and NaN/Inf policy: kernels/quant/quantize.hpp.
// Reductions over k chunks: kernels/quant/quant_reduce.hpp.
// qgZ reorder: src/zero/qgz.hpp (chunk x = [S_x, S_{X+x}, ..., S_{(Y-1)X+x}]).
//
// One element at a time with std::fabs, std::isfinite, std::nearbyint and an
// explicit clamp; block by block, no parallelism.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/base/bf16.hpp"

namespace zeropp::quant_ref {

// Bytes of n values at `bits` (8: one per value; 4: two per byte): the one
// definition of a quantized payload's size (QuantScheme, the kernels' checks
// and the CUDA kernels' offsets, hence callable from device code under nvcc).
#if defined(__CUDACC__)
#define ZEROPP_QUANT_HD __host__ __device__
#else
#define ZEROPP_QUANT_HD
#endif
ZEROPP_QUANT_HD constexpr int64_t payload_bytes(int bits, int64_t n) { return bits == 8 ? n : n / 2; }

template <int Bits>
struct Format;
template <>
struct Format<8> {
  using Storage = int8_t;
  static constexpr int kQmax = 127;
  static constexpr int64_t bytes(int64_t n) { return payload_bytes(8, n); }
};
template <>
struct Format<4> {
  using Storage = uint8_t;
  static constexpr int kQmax = 7;
  static constexpr int64_t bytes(int64_t n) { return payload_bytes(4, n); }
};

// The shape rules of check_quant_args (kernels/quant/quantize.hpp) without the view
// sizes: throws std::invalid_argument naming `who`.
inline void check_shape(const char* who, int bits, int64_t n, int64_t block) {
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument(std::string(who) + ": " + why + " (n = " + std::to_string(n) +
                                ", block = " + std::to_string(block) + ")");
  };
  if (bits != 8 && bits != 4) fail("bits must be 8 or 4, not " + std::to_string(bits));
  if (block <= 0) fail("block must be positive");
  if (n < 0) fail("n must not be negative");
  if (n % block != 0) fail("n must be a multiple of block (pad the buffer)");
  if (bits == 4 && block % 2 != 0) fail("int4 needs an even block (two values per byte)");
}

// Scale arithmetic of one block (kernels/quant/quantize.hpp): scale is stored,
// q_i = round-half-even(clamp((x_i * pre) * inv, -Q, Q)), inv = 0 means q = 0.
struct Params {
  float scale = 0, pre = 1, inv = 0;
};

// Q is the largest code's magnitude: 127, 7, or 448 for e4m3 (kernels/quant/quant_fp8_ref.hpp).
inline Params block_params_q(const float* x, int64_t len, float Q) {
  float m = 0;
  bool finite = true;
  for (int64_t i = 0; i < len; ++i) {
    finite = finite && std::isfinite(x[i]);
    m = std::fmax(m, std::fabs(x[i]));
  }
  Params p;
  if (!finite) {
    p.scale = std::numeric_limits<float>::quiet_NaN();
  } else if (m > 0) {
    p.scale = m / Q;
    if (!std::isfinite(p.scale * Q)) p.scale = std::nextafter(p.scale, 0.0f);
    p.pre = m < std::ldexp(1.0f, -64) ? std::ldexp(1.0f, 64) : 1.0f;
    p.inv = Q / (m * p.pre);
  }
  return p;
}

template <int Bits>
inline Params block_params(const float* x, int64_t len) {
  return block_params_q(x, len, float(Format<Bits>::kQmax));
}

template <int Bits>
inline int32_t quantize_one(float x, const Params& p) {
  if (p.inv == 0) return 0;
  const float Q = float(Format<Bits>::kQmax);
  const float v = std::fmin(std::fmax((x * p.pre) * p.inv, -Q), Q);
  return int32_t(std::nearbyint(v));
}

// Element i of a quantized buffer as an integer in [-Q, Q].
template <int Bits>
inline int32_t element(const typename Format<Bits>::Storage* q, int64_t i) {
  if constexpr (Bits == 8) {
    return q[i];
  } else {
    int32_t v = (i % 2 == 0 ? q[i / 2] : q[i / 2] >> 4) & 0xf;
    return v >= 8 ? v - 16 : v;
  }
}

// q (bytes(n)) and scales (n/block) from x (n).
template <int Bits>
inline void quantize(const float* x, typename Format<Bits>::Storage* q, float* scales, int64_t n,
                     int64_t block) {
  check_shape("quant_ref::quantize", Bits, n, block);
  for (int64_t b = 0; b < n / block; ++b) {
    const Params p = block_params<Bits>(x + b * block, block);
    scales[b] = p.scale;
    for (int64_t i = b * block; i < (b + 1) * block; ++i) {
      const int32_t v = quantize_one<Bits>(x[i], p);
      if constexpr (Bits == 8) {
        q[i] = int8_t(v);
      } else if (i % 2 == 0) {
        q[i / 2] = uint8_t(v & 0xf);
      } else {
        q[i / 2] = uint8_t(q[i / 2] | ((v & 0xf) << 4));
      }
    }
  }
}

// x_i = float(q_i) * scale (Add: x_i += float(q_i) * scale).
template <int Bits, bool Add>
inline void dequantize(const typename Format<Bits>::Storage* q, const float* scales, float* x, int64_t n,
                       int64_t block) {
  check_shape("quant_ref::dequantize", Bits, n, block);
  for (int64_t i = 0; i < n; ++i) {
    const float d = float(element<Bits>(q, i)) * scales[i / block];
    x[i] = Add ? x[i] + d : d;
  }
}

// dequantize, then each x_i rounded to its nearest bf16 (src/base/bf16.hpp).
template <int Bits>
inline void dequantize_bf16(const typename Format<Bits>::Storage* q, const float* scales, float* x, int64_t n,
                            int64_t block) {
  dequantize<Bits, false>(q, scales, x, n, block);
  round_to_bf16(x, n);
}

// out (n) = deq_0 + deq_1 + ... + deq_{k-1}, left to right in fp32; chunk j's
// bytes at q_in + j*bytes(n), its scales at scales_in + j*n/block.
template <int Bits>
inline void dequant_sum(const typename Format<Bits>::Storage* q_in, const float* scales_in, int k, float* out,
                        int64_t n, int64_t block) {
  check_shape("quant_ref::dequant_sum", Bits, n, block);
  if (k < 1) throw std::invalid_argument("quant_ref::dequant_sum: k must be at least 1");
  const int64_t cb = Format<Bits>::bytes(n), nb = n / block;
  for (int j = 0; j < k; ++j) {
    if (j == 0)
      dequantize<Bits, false>(q_in, scales_in, out, n, block);
    else
      dequantize<Bits, true>(q_in + j * cb, scales_in + j * nb, out, n, block);
  }
}

// dequant_sum through a full fp32 buffer, then quantize at OutBits.
template <int InBits, int OutBits>
inline void dequant_sum_requant(const typename Format<InBits>::Storage* q_in, const float* scales_in, int k,
                                typename Format<OutBits>::Storage* q_out, float* scales_out, int64_t n,
                                int64_t block) {
  std::vector<float> sum(size_t(n > 0 ? n : 0));
  dequant_sum<InBits>(q_in, scales_in, k, sum.data(), n, block);
  quantize<OutBits>(sum.data(), q_out, scales_out, n, block);
}

// qgZ step 1's reorder: grad holds P = X*Y slices of s = n/P elements (slice
// y*X + x at (y*X + x)*s); out holds X chunks of Y*s, chunk x = [S_x, S_{X+x},
// ..., S_{(Y-1)X+x}], i.e. out[x*Y*s + y*s + i] = grad[(y*X + x)*s + i].
inline void qgz_reorder(const float* grad, float* out, int64_t n, int X, int Y) {
  if (X < 1 || Y < 1 || n % (int64_t(X) * Y) != 0)
    throw std::invalid_argument("quant_ref::qgz_reorder: n must be a multiple of X*Y");
  const int64_t s = n / (int64_t(X) * Y), chunk = int64_t(Y) * s;
  for (int x = 0; x < X; ++x)
    for (int y = 0; y < Y; ++y)
      for (int64_t i = 0; i < s; ++i) out[x * chunk + y * s + i] = grad[(int64_t(y) * X + x) * s + i];
}

// The reorder, then quantize (what kernels/cuda fuses into one pass).
template <int Bits>
inline void qgz_reorder_quantize(const float* grad, typename Format<Bits>::Storage* q, float* scales,
                                 int64_t n, int X, int Y, int64_t block) {
  std::vector<float> r(size_t(n > 0 ? n : 0));
  qgz_reorder(grad, r.data(), n, X, Y);
  quantize<Bits>(r.data(), q, scales, n, block);
}

}  // namespace zeropp::quant_ref
