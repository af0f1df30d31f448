// Shard arithmetic and bf16 conversion: pure functions, one rank.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "src/base/bf16.hpp"
#include "src/zero/shard.hpp"

using namespace zeropp;

TEST_CASE("padded_size rounds up to a multiple of P*align", "[shard]") {
  CHECK(padded_size(10, 4) == 12);
  CHECK(padded_size(12, 4) == 12);
  CHECK(padded_size(3, 8) == 8);  // unit smaller than P: every rank still gets a slice
  CHECK(padded_size(1, 1) == 1);
  CHECK(padded_size(0, 4) == 0);  // empty unit: empty slices
  CHECK(padded_size(10, 4, 8) == 32);
  CHECK(padded_size(33, 2, 16) == 64);
  CHECK(slice_size(10, 4) == 3);
  CHECK(slice_size(10, 4, 8) == 8);
  CHECK(slice_size(0, 3) == 0);
  CHECK_THROWS_AS(padded_size(-1, 4), Error);
  CHECK_THROWS_AS(padded_size(4, 0), Error);
  CHECK_THROWS_AS(padded_size(4, 2, 0), Error);
}

TEST_CASE("slices tile the padded range exactly", "[shard]") {
  for (int P : {1, 2, 3, 4, 7, 8})
    for (int64_t align : {1, 2, 5, 64})
      for (int64_t n : {0, 1, 2, 7, 63, 64, 65, 1000, 12345}) {
        const int64_t padded = padded_size(n, P, align);
        REQUIRE(padded >= n);
        REQUIRE(padded < n + P * align);
        REQUIRE(padded % (P * align) == 0);
        int64_t next = 0, valid = 0;
        for (int r = 0; r < P; ++r) {
          const Span s = slice_span(n, P, r, align);
          REQUIRE(s.begin == next);
          REQUIRE(s.size() == slice_size(n, P, align));
          REQUIRE(s.size() % align == 0);
          const Span v = valid_part(s, n);
          REQUIRE(v.begin >= s.begin);
          REQUIRE(v.end <= s.end);
          valid += v.size();
          if (!s.empty()) {
            REQUIRE(owner_of(s.begin, n, P, align) == r);
            REQUIRE(owner_of(s.end - 1, n, P, align) == r);
          }
          next = s.end;
        }
        REQUIRE(next == padded);
        REQUIRE(valid == n);
      }
}

TEST_CASE("valid_part clips padding; slices of pure padding are empty", "[shard]") {
  // n = 3 over P = 4: slices {0},{1},{2},{3}; the last is padding.
  CHECK(valid_part(slice_span(3, 4, 2), 3) == Span{2, 3});
  CHECK(valid_part(slice_span(3, 4, 3), 3) == Span{3, 3});
  // n = 10, P = 4: slices of 3; rank 3 holds 9 and two padding elements.
  CHECK(slice_span(10, 4, 3) == Span{9, 12});
  CHECK(valid_part(slice_span(10, 4, 3), 10) == Span{9, 10});
  CHECK_THROWS_AS(slice_span(10, 4, 4), Error);
  CHECK_THROWS_AS(owner_of(12, 10, 4), Error);
}

TEST_CASE("intersect", "[shard]") {
  CHECK(intersect({0, 10}, {5, 20}) == Span{5, 10});
  CHECK(intersect({5, 20}, {0, 10}) == Span{5, 10});
  CHECK(intersect({0, 10}, {2, 3}) == Span{2, 3});
  CHECK(intersect({0, 5}, {5, 9}).empty());
  CHECK(intersect({0, 5}, {7, 9}) == Span{7, 7});
  CHECK(valid_part({8, 12}, 5) == Span{8, 8});
}

TEST_CASE("bf16 conversion rounds to nearest even and keeps NaN", "[shard][bf16]") {
  CHECK(fp32_to_bf16(1.0f) == 0x3f80);
  CHECK(bf16_to_fp32(0x3f80) == 1.0f);
  CHECK(fp32_to_bf16(-2.0f) == 0xc000);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1).
  CHECK(fp32_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);
  // 1 + 3·2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6: rounds up to even.
  CHECK(fp32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);
  // Just above halfway rounds up.
  CHECK(fp32_to_bf16(std::nextafter(1.0f + std::ldexp(1.0f, -8), 2.0f)) == 0x3f81);
  CHECK(std::isnan(bf16_to_fp32(fp32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(std::isnan(bf16_to_fp32(fp32_to_bf16(-std::numeric_limits<float>::quiet_NaN()))));
  uint32_t snan_bits = 0x7f800001u;  // a NaN whose payload sits below bf16's mantissa
  float snan;
  std::memcpy(&snan, &snan_bits, 4);
  CHECK(std::isnan(bf16_to_fp32(fp32_to_bf16(snan))));
  CHECK(bf16_to_fp32(fp32_to_bf16(std::numeric_limits<float>::infinity())) ==
        std::numeric_limits<float>::infinity());
  CHECK(std::isinf(bf16_to_fp32(fp32_to_bf16(std::numeric_limits<float>::max()))));  // rounds past bf16's max
  // Every bf16 value survives a round trip; rounding's relative error is at most 2^-8 (unit roundoff).
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = bf16_to_fp32(uint16_t(h));
    if (!std::isnan(f)) REQUIRE(fp32_to_bf16(f) == h);
  }
  for (float x : {0.1f, 3.14159f, -1234.567f, 1e-30f, 6.5e4f}) {
    const float y = bf16_to_fp32(fp32_to_bf16(x));
    CHECK(std::fabs(y - x) <= std::ldexp(std::fabs(x), -8));
  }
  const float in[3] = {1.0f, -0.5f, 2.0f};
  uint16_t mid[3];
  float out[3];
  fp32_to_bf16(in, mid, 3);
  bf16_to_fp32(mid, out, 3);
  CHECK(std::memcmp(in, out, sizeof in) == 0);
}
