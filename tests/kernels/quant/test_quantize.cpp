#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/ops/convert.hpp"
#include "kernels/quant/qgz_reorder.hpp"
#include "kernels/quant/quant_isa.hpp"
#include "kernels/quant/quantize.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Bit-for-bit equality (NaN equals NaN with the same payload).
template <class T>
void require_identical(CVec<T> a, CVec<T> b, const char* what) {
  REQUIRE(a.extent(0) == b.extent(0));
  for (size_t i = 0; i < a.extent(0); ++i) {
    if (std::memcmp(&a(i), &b(i), sizeof(T)) != 0) {
      INFO(what << "[" << i << "]: " << double(a(i)) << " vs " << double(b(i)));
      REQUIRE(std::memcmp(&a(i), &b(i), sizeof(T)) == 0);
    }
  }
}

// Normal values with blocks made adversarial: all zeros, one huge value, all
// denormals, tiny normals (below 2^-64), denormals next to normals.
Buf<float> adversarial(int64_t n, int64_t block, std::mt19937& rng) {
  Buf<float> x("x", n);
  std::normal_distribution<float> g(0, 0.02f);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t i = 0; i < n; ++i) x(i) = g(rng);
  const int64_t nb = n / block;
  for (int64_t b = 0; b < nb; ++b) {
    float* xb = x.data() + b * block;
    switch (b % 6) {
      case 1:
        for (int64_t i = 0; i < block; ++i) xb[i] = 0;
        break;
      case 2:
        xb[block / 3] = -3e30f;
        break;
      case 3:
        for (int64_t i = 0; i < block; ++i) xb[i] = u(rng) * 1e-39f;  // denormal
        break;
      case 4:
        for (int64_t i = 0; i < block; ++i) xb[i] = u(rng) * 1e-25f;  // normal, < 2^-64
        break;
      case 5:
        xb[0] = 1e-45f;
        xb[block - 1] = -2e-40f;
        break;
      default:
        break;
    }
  }
  return x;
}

// Both bit widths behind one interface for the templated tests.
template <int Bits>
struct Codec;
template <>
struct Codec<8> {
  using S = int8_t;
  static void q(CVec<float> x, Vec<S> q, Vec<float> s, int64_t n, int64_t b) { quantize_int8(x, q, s, n, b); }
  static void qr(CVec<float> x, Vec<S> q, Vec<float> s, int64_t n, int64_t b) {
    quantize_int8_reference(x, q, s, n, b);
  }
  static void d(CVec<S> q, CVec<float> s, Vec<float> x, int64_t n, int64_t b) {
    dequantize_int8(q, s, x, n, b);
  }
  static void dr(CVec<S> q, CVec<float> s, Vec<float> x, int64_t n, int64_t b) {
    dequantize_int8_reference(q, s, x, n, b);
  }
  static void da(CVec<S> q, CVec<float> s, Vec<float> x, int64_t n, int64_t b) {
    dequantize_int8_add(q, s, x, n, b);
  }
  static void dar(CVec<S> q, CVec<float> s, Vec<float> x, int64_t n, int64_t b) {
    dequantize_int8_add_reference(q, s, x, n, b);
  }
  static void db(CVec<S> q, CVec<float> s, Vec<float> x, int64_t n, int64_t b) {
    dequantize_int8_bf16(q, s, x, n, b);
  }
  static void dbr(CVec<S> q, CVec<float> s, Vec<float> x, int64_t n, int64_t b) {
    dequantize_int8_bf16_reference(q, s, x, n, b);
  }
  static int value(CVec<S> q, int64_t i) { return q(i); }
};
template <>
struct Codec<4> {
  using S = uint8_t;
  static void q(CVec<float> x, Vec<S> q, Vec<float> s, int64_t n, int64_t b) { quantize_int4(x, q, s, n, b); }
  static void qr(CVec<float> x, Vec<S> q, Vec<float> s, int64_t n, int64_t b) {
    quantize_int4_reference(x, q, s, n, b);
  }
  static void d(CVec<S> q, CVec<float> s, Vec<float> x, int64_t n, int64_t b) {
    dequantize_int4(q, s, x, n, b);
  }
  static void dr(CVec<S> q, CVec<float> s, Vec<float> x, int64_t n, int64_t b) {
    dequantize_int4_reference(q, s, x, n, b);
  }
  static void da(CVec<S> q, CVec<float> s, Vec<float> x, int64_t n, int64_t b) {
    dequantize_int4_add(q, s, x, n, b);
  }
  static void dar(CVec<S> q, CVec<float> s, Vec<float> x, int64_t n, int64_t b) {
    dequantize_int4_add_reference(q, s, x, n, b);
  }
  static void db(CVec<S> q, CVec<float> s, Vec<float> x, int64_t n, int64_t b) {
    dequantize_int4_bf16(q, s, x, n, b);
  }
  static void dbr(CVec<S> q, CVec<float> s, Vec<float> x, int64_t n, int64_t b) {
    dequantize_int4_bf16_reference(q, s, x, n, b);
  }
  static int value(CVec<S> q, int64_t i) {
    const int v = (i % 2 == 0 ? q(i / 2) : q(i / 2) >> 4) & 0xf;
    return v >= 8 ? v - 16 : v;
  }
};

// Round-trip bound: |x - deq| <= scale/2 up to float rounding (x*pre*inv,
// scale = m/Q and q*scale are each rounded: a relative Q*2^-20 of scale covers
// them) plus 2^-149-sized errors when scale is denormal.
template <int Bits>
void require_round_trip(CVec<float> x, CVec<float> scales, CVec<float> deq, int64_t block) {
  const double Q = QuantFormat<Bits>::kQmax;
  for (size_t i = 0; i < x.extent(0); ++i) {
    const double s = scales(i / block), err = std::fabs(double(x(i)) - double(deq(i)));
    const double bound = s * (0.5 + Q * std::ldexp(1.0, -20)) + 256 * std::ldexp(1.0, -149);
    if (!(err <= bound)) {
      INFO("element " << i << ": x " << x(i) << ", deq " << deq(i) << ", scale " << s);
      REQUIRE(err <= bound);
    }
  }
}

}  // namespace

TEMPLATE_TEST_CASE_SIG("quantize and dequantize match the reference bit for bit", "[kernels][quant]",
                       ((int Bits), Bits), 8, 4) {
  using C = Codec<Bits>;
  std::mt19937 rng(40 + Bits);
  // (n, block): one block, odd block counts, small and large blocks.
  for (auto [n, block] : {std::pair<int64_t, int64_t>{64, 64},
                          {2, 2},
                          {3 * 32, 32},
                          {5 * 128, 128},
                          {7 * 6, 6},
                          {12 * 2048, 2048},
                          {130 * 8, 8},  // more than one group of kQuantBlocksPerCall blocks
                          {0, 8}}) {
    INFO("n " << n << ", block " << block);
    Buf<float> x = adversarial(n, block, rng);
    const int64_t bytes = QuantFormat<Bits>::bytes(n), nb = n / block;
    Buf<typename C::S> q("q", bytes), q_r("q_r", bytes);
    Buf<float> s("s", nb), s_r("s_r", nb), d("d", n), d_r("d_r", n);
    C::q(x, q, s, n, block);
    C::qr(x, q_r, s_r, n, block);
    require_identical<typename C::S>(q, q_r, "q");
    require_identical<float>(s, s_r, "scales");
    C::d(q, s, d, n, block);
    C::dr(q, s, d_r, n, block);
    require_identical<float>(d, d_r, "dequantized");
    require_round_trip<Bits>(x, s, d, block);

    auto acc = random_buf<float>(n, rng);
    auto acc_r = copy_of<float>(acc);
    C::da(q, s, acc, n, block);
    C::dar(q, s, acc_r, n, block);
    require_identical<float>(acc, acc_r, "dequantized and added");

    // Fused with the bf16 rounding: the reference, and the unfused kernels (qwZ's old decode).
    Buf<float> b("b", n), b_r("b_r", n);
    C::db(q, s, b, n, block);
    C::dbr(q, s, b_r, n, block);
    require_identical<float>(b, b_r, "dequantized to bf16");
    round_to_bf16(d, n);
    require_identical<float>(b, d, "dequantized, then round_to_bf16");
  }
}

TEMPLATE_TEST_CASE_SIG("blockwise quantization: scales, extremes and round trip", "[kernels][quant]",
                       ((int Bits), Bits), 8, 4) {
  using C = Codec<Bits>;
  constexpr int Q = QuantFormat<Bits>::kQmax;
  std::mt19937 rng(50 + Bits);
  const int64_t block = 64, nb = 6, n = nb * block;
  Buf<float> x = adversarial(n, block, rng);
  Buf<typename C::S> q("q", QuantFormat<Bits>::bytes(n));
  Buf<float> s("s", nb), d("d", n), acc("acc", n);
  C::q(x, q, s, n, block);
  C::d(q, s, d, n, block);
  require_round_trip<Bits>(x, s, d, block);
  for (int64_t b = 0; b < nb; ++b) {
    INFO("block " << b);
    float m = 0;
    int qmax = 0;
    for (int64_t i = b * block; i < (b + 1) * block; ++i) {
      m = std::fmax(m, std::fabs(x(i)));
      qmax = std::max(qmax, std::abs(C::value(q, i)));
    }
    REQUIRE(bits_of(s(b)) == bits_of(m / float(Q)));
    if (m == 0) {
      REQUIRE(qmax == 0);
    } else {
      REQUIRE(qmax == Q);  // the largest element always maps to +-Q, even for denormal blocks
    }
  }
  // The all-zero block (b = 1) dequantizes to exact zeros; the huge value of b = 2 survives.
  for (int64_t i = block; i < 2 * block; ++i) REQUIRE(d(i) == 0.0f);
  REQUIRE(d(2 * block + block / 3) == Approx(-3e30).epsilon(1e-6));
  // dequantize_add adds exactly what dequantize writes.
  auto base = random_buf<float>(n, rng);
  Kokkos::deep_copy(acc, base);
  C::da(q, s, acc, n, block);
  for (int64_t i = 0; i < n; ++i) REQUIRE(bits_of(acc(i)) == bits_of(base(i) + d(i)));
}

TEMPLATE_TEST_CASE_SIG("a non-finite input makes its whole block NaN, and only that block",
                       "[kernels][quant]", ((int Bits), Bits), 8, 4) {
  using C = Codec<Bits>;
  const int64_t block = 8, nb = 4, n = nb * block;
  for (float bad : {kNaN, kInf, -kInf, -kNaN}) {
    INFO("bad value " << bad);
    std::mt19937 rng(60);
    auto x = random_buf<float>(n, rng);
    x(2 * block + 3) = bad;
    Buf<typename C::S> q("q", QuantFormat<Bits>::bytes(n)), q_r("q_r", QuantFormat<Bits>::bytes(n));
    Buf<float> s("s", nb), s_r("s_r", nb), d("d", n);
    C::q(x, q, s, n, block);
    C::qr(x, q_r, s_r, n, block);
    require_identical<typename C::S>(q, q_r, "q");
    require_identical<float>(s, s_r, "scales");
    C::d(q, s, d, n, block);
    for (int64_t b = 0; b < nb; ++b) REQUIRE(std::isnan(s(b)) == (b == 2));
    for (int64_t i = 0; i < n; ++i) REQUIRE(std::isnan(d(i)) == (i / block == 2));
    for (int64_t i = 2 * block; i < 3 * block; ++i) REQUIRE(C::value(q, i) == 0);
  }
}

TEST_CASE("quantize handles the extremes of fp32 without overflow", "[kernels][quant]") {
  // FLT_MAX: scale = FLT_MAX/127 and 127*scale must not round up to Inf.
  const int64_t n = 4;
  Buf<float> x("x", n), s("s", 1), d("d", n);
  Buf<int8_t> q8("q8", n);
  Buf<uint8_t> q4("q4", n / 2);
  x(0) = FLT_MAX;
  x(1) = -FLT_MAX;
  x(2) = FLT_MIN;
  x(3) = 1e30f;
  quantize_int8(x, q8, s, n, n);
  dequantize_int8(q8, s, d, n, n);
  for (int64_t i = 0; i < n; ++i) REQUIRE(std::isfinite(d(i)));
  REQUIRE(q8(0) == 127);
  REQUIRE(q8(1) == -127);
  quantize_int4(x, q4, s, n, n);
  dequantize_int4(q4, s, d, n, n);
  for (int64_t i = 0; i < n; ++i) REQUIRE(std::isfinite(d(i)));
  // A denormal alone in a block: pre = 2^64 keeps inv finite and it maps to -Q; its
  // scale (denormal too) has fewer bits, so it comes back within the round-trip bound.
  x(0) = 0;
  x(1) = -1e-40f;
  x(2) = 0;
  x(3) = 0;
  quantize_int8(x, q8, s, n, n);
  dequantize_int8(q8, s, d, n, n);
  REQUIRE(q8(1) == -127);
  REQUIRE(d(1) < 0);
  REQUIRE(std::fabs(d(1) - x(1)) <= s(0) / 2 + 1e-45f);
  quantize_int4(x, q4, s, n, n);
  dequantize_int4(q4, s, d, n, n);
  REQUIRE(d(1) < 0);
  REQUIRE(std::fabs(d(1) - x(1)) <= s(0) / 2 + 1e-45f);
  // Below 64 * 2^-149 (int8) the scale m/127 underflows to 0 and the block comes back as
  // zeros: an error under 1e-43, inside the round-trip bound.
  x(1) = -1e-45f;
  quantize_int8(x, q8, s, n, n);
  dequantize_int8(q8, s, d, n, n);
  REQUIRE(s(0) == 0.0f);
  REQUIRE(d(1) == 0.0f);
}

TEST_CASE("int8 and int4 layouts: known bytes for a known input", "[kernels][quant]") {
  // Scale 1 (absmax = Q) makes inv = 1, so q = round-half-to-even(x).
  {
    const float in[] = {127, 0.5f, 1.5f, 2.5f, -0.5f, -2.5f, -127, 3.49f};
    const int8_t want[] = {127, 0, 2, 2, 0, -2, -127, 3};
    Buf<float> x("x", 8), s("s", 1), d("d", 8);
    Buf<int8_t> q("q", 8);
    for (int i = 0; i < 8; ++i) x(i) = in[i];
    quantize_int8(x, q, s, 8, 8);
    REQUIRE(s(0) == 1.0f);
    for (int i = 0; i < 8; ++i) REQUIRE(q(i) == want[i]);
  }
  {
    // Element 2i in the low nibble, 2i+1 in the high nibble, two's complement.
    const float in[] = {1, -1, 7, -7, 0.5f, 1.5f, 2.5f, -3.5f};
    const uint8_t want[] = {0xF1, 0x97, 0x20, 0xC2};  // {1,-1}, {7,-7}, {0,2}, {2,-4}
    Buf<float> x("x", 8), s("s", 2), d("d", 8);
    Buf<uint8_t> q("q", 4);
    for (int i = 0; i < 8; ++i) x(i) = in[i];
    quantize_int4(x, q, s, 8, 4);
    REQUIRE(s(0) == 1.0f);
    REQUIRE(s(1) == 3.5f / 7);
    // Second block: absmax 3.5 -> inv = 2, values 1, 3, 5, -7.
    const uint8_t want2[] = {0xF1, 0x97, 0x31, 0x95};
    for (int i = 0; i < 4; ++i) REQUIRE(int(q(i)) == int(want2[i]));
    // One block of 8 with absmax 7: the nibbles of `want`.
    quantize_int4(x, q, s, 8, 8);
    REQUIRE(s(0) == 1.0f);
    for (int i = 0; i < 4; ++i) REQUIRE(int(q(i)) == int(want[i]));
    dequantize_int4(q, s, d, 8, 8);
    const float back[] = {1, -1, 7, -7, 0, 2, 2, -4};
    for (int i = 0; i < 8; ++i) REQUIRE(d(i) == back[i]);
  }
}

// Every pair of int4 values, negative ones in either nibble: the packing is that
// of two's complement nibbles, computed here on unsigned values.
TEST_CASE("int4 packing of every pair of values, bit for bit", "[kernels][quant]") {
  const int64_t n = 2 * 15 * 15 + 2;  // the pairs, then {7, 7}: absmax 7 gives scale 1 and q = x
  Buf<float> x("x", n), s("s", 1), d("d", n);
  Buf<uint8_t> q("q", n / 2);
  for (int lo = -7; lo <= 7; ++lo)
    for (int hi = -7; hi <= 7; ++hi) {
      const int64_t i = (lo + 7) * 15 + (hi + 7);
      x(2 * i) = float(lo);
      x(2 * i + 1) = float(hi);
    }
  x(n - 2) = x(n - 1) = 7.0f;
  quantize_int4(x, q, s, n, n);
  REQUIRE(s(0) == 1.0f);
  for (int64_t i = 0; i < n / 2; ++i) {
    const unsigned lo = unsigned(int(x(2 * i))) & 0xfu, hi = unsigned(int(x(2 * i + 1))) & 0xfu;
    INFO("pair " << x(2 * i) << ", " << x(2 * i + 1));
    REQUIRE(int(q(i)) == int(lo | hi << 4));
  }
  dequantize_int4(q, s, d, n, n);
  for (int64_t i = 0; i < n; ++i) REQUIRE(d(i) == x(i));
}

TEST_CASE("quantize rejects shapes it cannot handle", "[kernels][quant]") {
  Buf<float> x("x", 12), s("s", 4), d("d", 12);
  Buf<int8_t> q8("q8", 12);
  Buf<uint8_t> q4("q4", 6);
  REQUIRE_THROWS_AS(quantize_int8(x, q8, s, 12, 5), std::invalid_argument);  // not a multiple
  REQUIRE_THROWS_AS(quantize_int8(x, q8, s, 12, 0), std::invalid_argument);
  REQUIRE_THROWS_AS(quantize_int4(x, q4, s, 12, 3), std::invalid_argument);  // odd int4 block
  REQUIRE_THROWS_AS(quantize_int8(x, q8, s, 12, 2), std::invalid_argument);  // 6 scales needed
  REQUIRE_THROWS_AS(dequantize_int4(q4, s, d, 16, 4), std::invalid_argument);
  REQUIRE_THROWS_WITH(quantize_int8(x, q8, s, 12, 5), Catch::Contains("multiple of block"));
  REQUIRE_NOTHROW(quantize_int4(x, q4, s, 12, 4));
}

TEMPLATE_TEST_CASE_SIG("dequantize to bf16 rounds like round_to_bf16 at the extremes", "[kernels][quant]",
                       ((int Bits), Bits), 8, 4) {
  using C = Codec<Bits>;
  const int64_t block = 16, nb = 4, n = nb * block;
  Buf<float> x("x", n);
  for (int64_t i = 0; i < n; ++i) {
    const float sign = i % 2 ? -1.0f : 1.0f;
    switch (i / block) {
      case 0:  // near FLT_MAX: some round past the largest bf16 to Inf
        x(i) = sign * (FLT_MAX - float(i) * 1e31f);
        break;
      case 1:  // ties between two bf16 values (odd and even low halves)
        x(i) = sign * (1.0f + float(i) * 0x1p-8f + 0x1p-9f);
        break;
      case 2:  // denormals
        x(i) = sign * float(i) * 1e-41f;
        break;
      default:  // a NaN block
        x(i) = i == 3 * block + 5 ? kNaN : float(i);
        break;
    }
  }
  Buf<typename C::S> q("q", QuantFormat<Bits>::bytes(n));
  Buf<float> s("s", nb), b("b", n), b_r("b_r", n), d("d", n);
  C::q(x, q, s, n, block);
  C::db(q, s, b, n, block);
  C::dbr(q, s, b_r, n, block);
  require_identical<float>(b, b_r, "dequantized to bf16");
  C::d(q, s, d, n, block);
  round_to_bf16(d, n);
  require_identical<float>(b, d, "dequantized, then round_to_bf16");
  bool overflow = false;
  for (int64_t i = 0; i < block; ++i) overflow = overflow || std::isinf(b(i));
  REQUIRE(overflow);
  for (int64_t i = 3 * block; i < n; ++i) REQUIRE(std::isnan(b(i)));

  // Exact ties: integers q in [-Q, Q] (scale 1), then scales 1 + 2^-8 and 1 + 2^-7 + 2^-8:
  // q * scale for q = +-1, 2, 4 ... lies halfway between two bf16, the lower one even and odd.
  constexpr int Q = QuantFormat<Bits>::kQmax;
  const int64_t tb = 2 * (2 * Q + 1) + 2, tn = 2 * tb;
  Buf<float> t("t", tn), tb16("tb16", tn), tref("tref", tn);
  for (int64_t i = 0; i < tn; ++i) t(i) = float(i % tb % (2 * Q + 1) - Q);
  Buf<typename C::S> tq("tq", QuantFormat<Bits>::bytes(tn));
  Buf<float> ts("ts", 2);
  C::q(t, tq, ts, tn, tb);
  REQUIRE(ts(0) == 1.0f);
  ts(0) = 1.0f + 0x1p-8f;
  ts(1) = 1.0f + 0x1p-7f + 0x1p-8f;
  C::db(tq, ts, tb16, tn, tb);
  C::d(tq, ts, tref, tn, tb);
  round_to_bf16(tref, tn);
  require_identical<float>(tb16, tref, "ties dequantized to bf16");
  REQUIRE(tb16(tb + Q + 1) == 1.0f + 0x1p-6f);  // q = 1 in the odd block: up to the even neighbour
  REQUIRE(tb16(Q + 1) == 1.0f);                 // q = 1 in the even block: down
}

TEMPLATE_TEST_CASE_SIG("qgz_reorder_quantize equals the reorder, then quantize", "[kernels][quant]",
                       ((int Bits), Bits), 8, 4) {
  std::mt19937 rng(70 + Bits);
  // (X, Y, block, blocks per slice)
  for (auto [X, Y, block, per] : {std::tuple<int, int, int64_t, int64_t>{2, 2, 32, 1},
                                  {2, 3, 16, 3},
                                  {1, 4, 8, 2},
                                  {4, 1, 64, 1},
                                  {3, 2, 6, 5}}) {
    const int64_t n = int64_t(X) * Y * per * block, nb = n / block, bytes = QuantFormat<Bits>::bytes(n);
    INFO("X " << X << ", Y " << Y << ", block " << block << ", n " << n);
    Buf<float> g = adversarial(n, block, rng);
    Buf<typename QuantFormat<Bits>::Storage> q("q", bytes);
    Buf<float> sc("sc", nb);
    std::vector<typename QuantFormat<Bits>::Storage> q_r(static_cast<size_t>(bytes));
    std::vector<float> sc_r(static_cast<size_t>(nb));
    if constexpr (Bits == 8)
      qgz_reorder_quantize_int8(g, q, sc, n, X, Y, block);
    else
      qgz_reorder_quantize_int4(g, q, sc, n, X, Y, block);
    quant_ref::qgz_reorder_quantize<Bits>(g.data(), q_r.data(), sc_r.data(), n, X, Y, block);
    require_identical<typename QuantFormat<Bits>::Storage>(
        q, CVec<typename QuantFormat<Bits>::Storage>(q_r.data(), q_r.size()), "q");
    require_identical<float>(sc, CVec<float>(sc_r.data(), sc_r.size()), "scales");
  }
  // A slice that is not a whole number of blocks is refused.
  Buf<float> g("g", 64), sc("sc", 8);
  Buf<typename QuantFormat<Bits>::Storage> q("q", 64);
  auto call = [&] {
    if constexpr (Bits == 8)
      qgz_reorder_quantize_int8(g, q, sc, 48, 2, 2, 8);  // slice 12, block 8
    else
      qgz_reorder_quantize_int4(g, q, sc, 48, 2, 2, 8);
  };
  REQUIRE_THROWS_WITH(call(), Catch::Contains("not a multiple of block"));
}

TEST_CASE("every ISA's quantization loops match the reference bit for bit", "[kernels][quant]") {
  // The environment's cap is what the kernels run (the per-ISA ctest entries set it).
  REQUIRE(std::string(quant_kernels().name) == quant_kernels_for(simd_isa()).name);
  if (simd_isa() == SimdIsa::baseline) REQUIRE(std::string(quant_kernels().name) == "sse4");
  std::mt19937 rng(80);
  const int64_t block = 48, nb = 6, n = nb * block;
  int tested = 0;
  for (SimdIsa isa : {SimdIsa::avx512, SimdIsa::avx2, SimdIsa::baseline}) {
    const QuantIsaKernels& k = quant_kernels_for(isa);
    const char* cap = isa == SimdIsa::baseline ? "sse4" : simd_isa_name(isa);
    if (std::string(k.name) != cap) {
      WARN("this CPU lacks " << cap << ": not tested here");
      continue;
    }
    INFO("ISA " << cap);
    ++tested;
    Buf<float> x = adversarial(n, block, rng);
    std::vector<int8_t> q8(static_cast<size_t>(n)), q8r(static_cast<size_t>(n));
    std::vector<uint8_t> q4(static_cast<size_t>(n / 2)), q4r(static_cast<size_t>(n / 2));
    std::vector<float> s8(nb), s8r(nb), s4(nb), s4r(nb);
    k.quantize8(x.data(), q8.data(), s8.data(), nb, block);
    k.quantize4(x.data(), q4.data(), s4.data(), nb, block);
    quant_ref::quantize<8>(x.data(), q8r.data(), s8r.data(), n, block);
    quant_ref::quantize<4>(x.data(), q4r.data(), s4r.data(), n, block);
    REQUIRE(q8 == q8r);
    REQUIRE(q4 == q4r);
    REQUIRE(std::memcmp(s8.data(), s8r.data(), 4 * size_t(nb)) == 0);
    REQUIRE(std::memcmp(s4.data(), s4r.data(), 4 * size_t(nb)) == 0);
    // Dequantize in every mode, and the k-chunk sums (the chunks: the first k blocks' bytes).
    for (int mode = 0; mode < 3; ++mode) {
      std::vector<float> d8(size_t(n), 0.5f), d4(size_t(n), 0.5f), r8(size_t(n), 0.5f), r4(size_t(n), 0.5f);
      k.dequantize8[mode](q8.data(), s8.data(), d8.data(), nb, block);
      k.dequantize4[mode](q4.data(), s4.data(), d4.data(), nb, block);
      if (mode == 2) {
        quant_ref::dequantize_bf16<8>(q8.data(), s8.data(), r8.data(), n, block);
        quant_ref::dequantize_bf16<4>(q4.data(), s4.data(), r4.data(), n, block);
      } else if (mode == 1) {
        quant_ref::dequantize<8, true>(q8.data(), s8.data(), r8.data(), n, block);
        quant_ref::dequantize<4, true>(q4.data(), s4.data(), r4.data(), n, block);
      } else {
        quant_ref::dequantize<8, false>(q8.data(), s8.data(), r8.data(), n, block);
        quant_ref::dequantize<4, false>(q4.data(), s4.data(), r4.data(), n, block);
      }
      INFO("mode " << mode);
      REQUIRE(std::memcmp(d8.data(), r8.data(), 4 * size_t(n)) == 0);
      REQUIRE(std::memcmp(d4.data(), r4.data(), 4 * size_t(n)) == 0);
    }
    for (int kk = 1; kk <= 5; ++kk) {
      // chunks of one block: chunk j = block j (normal, zero, huge, denormal, tiny).
      std::vector<float> a8(static_cast<size_t>(block)), a4(static_cast<size_t>(block)),
          r8(static_cast<size_t>(block)), r4(static_cast<size_t>(block));
      k.sum8(q8.data(), block, s8.data(), 1, kk, a8.data(), block);
      k.sum4(q4.data(), block / 2, s4.data(), 1, kk, a4.data(), block);
      quant_ref::dequant_sum<8>(q8.data(), s8.data(), kk, r8.data(), block, block);
      quant_ref::dequant_sum<4>(q4.data(), s4.data(), kk, r4.data(), block, block);
      INFO("k " << kk);
      REQUIRE(std::memcmp(a8.data(), r8.data(), 4 * size_t(block)) == 0);
      REQUIRE(std::memcmp(a4.data(), r4.data(), 4 * size_t(block)) == 0);
    }
  }
  REQUIRE(tested >= 1);
}
