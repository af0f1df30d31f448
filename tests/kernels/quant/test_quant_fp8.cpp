// fp8 e4m3: the conversions against the format's definition and a brute-force
// nearest-value search, and the blockwise scheme of qwZ's gathers.
#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/quant/quant_fp8.hpp"
#include "kernels/quant/quant_fp8_ref.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Code c by the definition of e4m3: (-1)^s (1 + m/8) 2^(e-7), subnormal m/8 2^-6
// for e = 0, NaN for e = 15 and m = 7.
double definition(int c) {
  const int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
  if (e == 15 && m == 7) return std::numeric_limits<double>::quiet_NaN();
  const double mag = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
  return s ? -mag : mag;
}

// The nearest finite e4m3 of x by search over the table, ties to the even
// mantissa; infinities saturate, NaN is the NaN code (sign kept).
int nearest(float x) {
  const int sign = std::signbit(x) ? 0x80 : 0;
  if (std::isnan(x)) return sign | 0x7f;
  if (std::isinf(x)) return sign | 0x7e;
  int best = -1;
  double best_d = 0;
  for (int k = 0; k < 0x7f; ++k) {
    const int c = sign | k;
    const double d = std::fabs(double(x) - definition(c));
    if (best < 0 || d < best_d || (d == best_d && (c & 1) == 0)) {
      best = c;
      best_d = d;
    }
  }
  return best;
}

// fp32 inputs for the encoder: every exponent from below e4m3's smallest
// subnormal to past 448 with a stride over the mantissas, every tie point
// between consecutive e4m3 values and its neighbours, and the edges.
std::vector<float> encoder_inputs() {
  std::vector<float> in;
  for (uint32_t e = 127 - 12; e <= 127 + 10; ++e)
    for (uint32_t m = 0; m < (1u << 23); m += 997) in.push_back(fp8::bit_cast<float>(e << 23 | m));
  for (int k = 0; k + 1 < 0x7f; ++k) {
    const auto tie = float((definition(k) + definition(k + 1)) / 2);  // exact: a 5-bit significand
    in.insert(in.end(), {tie, std::nextafter(tie, 0.0f), std::nextafter(tie, kInf)});
  }
  in.insert(in.end(),
            {0.0f, 448.0f, std::nextafter(448.0f, 0.0f), std::nextafter(448.0f, kInf), 464.0f, 480.0f, 1e30f,
             FLT_MAX, 0x1p-9f, 0x1p-10f, std::nextafter(0x1p-10f, 0.0f), std::nextafter(0x1p-10f, 1.0f),
             0x1p-6f, std::nextafter(0x1p-6f, 0.0f), FLT_MIN, FLT_TRUE_MIN, 1e-40f, kInf, kNaN});
  const size_t positive = in.size();
  for (size_t i = 0; i < positive; ++i) in.push_back(-in[i]);
  return in;
}

// Blocks of normal values, an all-zero block, a block spanning e4m3's
// subnormals (values 2^-12 of the block's largest), a tiny block (below 2^-64)
// and a denormal one.
Buf<float> blocks(int64_t block, std::mt19937& rng) {
  const int64_t nb = 6;
  Buf<float> x("x", nb * block);
  std::normal_distribution<float> g(0, 0.02f);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t i = 0; i < block; ++i) {
      float& v = x(b * block + i);
      switch (b) {
        case 1:
          v = 0;
          break;
        case 2:
          v = i == 0 ? 3.0f : u(rng) * 0x1p-12f;
          break;
        case 3:
          v = u(rng) * 1e-25f;
          break;
        case 4:
          v = u(rng) * 1e-39f;
          break;
        default:
          v = g(rng);
          break;
      }
    }
  return x;
}

// |x - x'| within half an e4m3 step of x / scale (2^-4 relative for normal
// codes, 2^-10 absolute for subnormal ones) times the scale, plus the fp32
// rounding of the scale, its inverse and the products (a few ulps, and
// 2^-149 steps where the scale is denormal).
void require_fp8_round_trip(CVec<float> x, CVec<float> scales, CVec<float> deq, int64_t block) {
  for (size_t i = 0; i < x.extent(0); ++i) {
    const double s = scales(i / block), a = std::fabs(double(x(i)));
    const double step = std::fmax(std::ldexp(a, -4), std::ldexp(s, -10));
    const double bound =
        step * (1 + std::ldexp(1.0, -18)) + std::ldexp(a + 448 * s, -20) + std::ldexp(1.0, -139);
    const double err = std::fabs(double(x(i)) - double(deq(i)));
    if (!(err <= bound)) {
      INFO("element " << i << ": x " << x(i) << ", deq " << deq(i) << ", scale " << s);
      REQUIRE(err <= bound);
    }
  }
}

}  // namespace

TEST_CASE("e4m3 decode of all 256 codes follows the format's definition", "[kernels][fp8]") {
  for (int c = 0; c < 256; ++c) {
    INFO("code " << c);
    const float d = fp8::decode(uint8_t(c));
    const double want = definition(c);
    if (std::isnan(want)) {
      REQUIRE(std::isnan(d));
    } else {
      REQUIRE(double(d) == want);
      REQUIRE(std::signbit(d) == bool(c & 0x80));  // -0 is 0x80
    }
  }
  REQUIRE(fp8::decode(0x7e) == 448.0f);
  REQUIRE(fp8::decode(0x01) == 0x1p-9f);
}

TEST_CASE("e4m3 encode is the nearest value, ties to even, saturating, on a dense set of fp32",
          "[kernels][fp8]") {
  const std::vector<float> in = encoder_inputs();
  REQUIRE(in.size() > 300000);
  for (float x : in) {
    const int want = nearest(x), got = fp8::encode(x);
    if (got != want) {
      INFO("x = " << x << " (bits " << std::hex << fp8::bit_cast<uint32_t>(x) << "): encode " << got
                  << ", nearest " << want);
      REQUIRE(got == want);
    }
  }
  // The cases the brute force decides, spelled out.
  REQUIRE(fp8::encode(0x1p-10f) == 0x00);  // half the smallest subnormal: a tie, to the even 0
  REQUIRE(fp8::encode(-0.0f) == 0x80);     // the sign of zero is kept
  REQUIRE(fp8::encode(464.0f) == 0x7e);    // past 448: saturated, never the NaN code
  REQUIRE(fp8::encode(-kInf) == 0xfe);     // -448
  REQUIRE((fp8::encode(kNaN) & 0x7f) == 0x7f);
}

TEST_CASE("fp8 blocks: scales, the largest element at 448, round trip within e4m3's precision",
          "[kernels][fp8]") {
  std::mt19937 rng(81);
  const int64_t block = 64, nb = 6, n = nb * block;
  Buf<float> x = blocks(block, rng);
  Buf<uint8_t> q("q", n);
  Buf<float> s("s", nb), d("d", n);
  quantize_fp8(x, q, s, n, block);
  dequantize_fp8(q, s, d, n, block);
  require_fp8_round_trip(x, s, d, block);
  for (int64_t b = 0; b < nb; ++b) {
    INFO("block " << b);
    float m = 0, top = 0;
    for (int64_t i = b * block; i < (b + 1) * block; ++i) {
      m = std::fmax(m, std::fabs(x(i)));
      top = std::fmax(top, std::fabs(fp8::decode(q(i))));
    }
    REQUIRE(fp8::bit_cast<uint32_t>(s(b)) == fp8::bit_cast<uint32_t>(m / 448.0f));
    REQUIRE(top == (m == 0 ? 0.0f : 448.0f));
  }
  for (int64_t i = block; i < 2 * block; ++i) REQUIRE((q(i) == 0 && d(i) == 0.0f));  // all-zero block
  // Block 2 reaches e4m3's subnormals: 3 * 2^-12 / scale = 2^-12 * 448 / 3 < 2^-6.
  int subnormal = 0;
  for (int64_t i = 2 * block; i < 3 * block; ++i) subnormal += (q(i) & 0x78) == 0 && (q(i) & 7) != 0;
  REQUIRE(subnormal > 0);
}

TEST_CASE("fp8 kernels match the reference bit for bit; a non-finite input makes its block NaN",
          "[kernels][fp8]") {
  std::mt19937 rng(82);
  for (int64_t block : {int64_t(2), int64_t(32), int64_t(256)}) {
    INFO("block " << block);
    Buf<float> x = blocks(block, rng);
    const int64_t n = x.extent(0), nb = n / block;
    x(1) = kNaN;
    x(block * 5) = -kInf;
    Buf<uint8_t> q("q", n), qr("qr", n);
    Buf<float> s("s", nb), sr("sr", nb), d("d", n), dr("dr", n);
    quantize_fp8(x, q, s, n, block);
    fp8::quantize(x.data(), qr.data(), sr.data(), n, block);
    REQUIRE(std::memcmp(q.data(), qr.data(), size_t(n)) == 0);
    REQUIRE(std::memcmp(s.data(), sr.data(), sizeof(float) * size_t(nb)) == 0);
    for (bool bf16 : {false, true}) {
      bf16 ? dequantize_fp8_bf16(q, s, d, n, block) : dequantize_fp8(q, s, d, n, block);
      bf16 ? fp8::dequantize<true>(qr.data(), sr.data(), dr.data(), n, block)
           : fp8::dequantize<false>(qr.data(), sr.data(), dr.data(), n, block);
      REQUIRE(std::memcmp(d.data(), dr.data(), sizeof(float) * size_t(n)) == 0);
    }
    REQUIRE(std::isnan(s(0)));
    REQUIRE(std::isnan(s(5)));
    for (int64_t i = 0; i < n; ++i) {
      const bool nan_block = i / block == 0 || i / block == 5;
      if (nan_block) REQUIRE((q(i) == 0 && std::isnan(d(i))));
      if (!nan_block) REQUIRE(std::isfinite(d(i)));
    }
  }
  Buf<float> x("x", 6), s("s", 2);
  Buf<uint8_t> q("q", 6);
  REQUIRE_THROWS_AS(quantize_fp8(x, q, s, 6, 4), std::invalid_argument);  // n not a multiple of block
}
