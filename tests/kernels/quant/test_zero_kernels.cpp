// The engine's and qgZ's elementwise kernels against the scalar code they
// replaced: bf16 conversion (src/base/bf16.hpp), y += a·x, qgZ's reorder
// (quant_ref::qgz_reorder) and the error-feedback update, bit for bit.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/ops/accumulate.hpp"
#include "kernels/ops/convert.hpp"
#include "kernels/quant/error_feedback.hpp"
#include "kernels/quant/qgz_reorder.hpp"
#include "kernels/quant/quant_ref.hpp"
#include "src/base/bf16.hpp"

using namespace zeropp;

namespace {
std::vector<float> values(int64_t n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    x[size_t(i)] = std::sin(float(i) * 0.37f) * std::ldexp(1.0f, int(i % 11) - 5);
  return x;
}
bool same_bits(const float* a, const float* b, int64_t n) { return std::memcmp(a, b, size_t(n) * 4) == 0; }
}  // namespace

TEST_CASE("bf16 conversion kernels equal the scalar conversions", "[kernels][simd]") {
  std::vector<float> x = values(1001);
  x[3] = std::numeric_limits<float>::quiet_NaN();
  x[4] = std::numeric_limits<float>::infinity();
  x[5] = std::numeric_limits<float>::max();
  const int64_t n = int64_t(x.size());
  std::vector<uint16_t> h(x.size());
  to_bf16(CVec<float>(x.data(), n), Vec<uint16_t>(h.data(), n), n);
  std::vector<float> back(x.size()), rounded = x;
  from_bf16(CVec<uint16_t>(h.data(), n), Vec<float>(back.data(), n), n);
  round_to_bf16(Vec<float>(rounded.data(), n), n);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t want = fp32_to_bf16(x[size_t(i)]);
    const float wantf = bf16_to_fp32(want);
    bad += h[size_t(i)] != want || !same_bits(&back[size_t(i)], &wantf, 1) ||
           !same_bits(&rounded[size_t(i)], &wantf, 1);
  }
  CHECK(bad == 0);
  CHECK(std::isnan(back[3]));
}

TEST_CASE("round_to_bf16 copies the scalar bf16 round trip bit for bit", "[kernels][simd]") {
  // Bit patterns: NaN payloads (signalling, only low bits set, negative, all
  // ones), infinities, signed zeros, denormals (a tie among them), ties to
  // even both ways, the largest floats (the tie above the largest bf16
  // rounds to infinity), then random bits.
  std::vector<uint32_t> bits = {0x7f800001u, 0x7f80ffffu, 0x7fc00000u, 0xff800001u, 0xffffffffu, 0x7fbfffffu,
                                0x7f800000u, 0xff800000u, 0x00000000u, 0x80000000u, 0x00000001u, 0x007fffffu,
                                0x00008000u, 0x00018000u, 0x80008000u, 0x3f808000u, 0x3f818000u, 0x3f808001u,
                                0xbf818000u, 0x7f7fffffu, 0x7f7f8000u, 0x7f7e8000u, 0x3f7fffffu, 0x00807fffu};
  std::mt19937 rng(7);
  while (bits.size() < 3000) bits.push_back(uint32_t(rng()));
  const int64_t total = int64_t(bits.size());
  std::vector<float> x(bits.size()), want(bits.size());
  std::memcpy(x.data(), bits.data(), bits.size() * 4);
  for (size_t i = 0; i < x.size(); ++i) want[i] = bf16_to_fp32(fp32_to_bf16(x[i]));
  const std::vector<float> x0 = x;
  // Every start offset within a vector and lengths with every tail, guarded:
  // nothing before or past out[0, n) is written, the input is not.
  for (int64_t off : {0, 1, 3, 7})
    for (int64_t n : {int64_t(0), int64_t(1), int64_t(15), int64_t(17), int64_t(33), total - 7}) {
      std::vector<float> out(size_t(n + 2), -1.0f);
      round_to_bf16(CVec<float>(x.data() + off, n), Vec<float>(out.data() + 1, n), n);
      INFO("offset " << off << ", n " << n);
      CHECK(same_bits(out.data() + 1, want.data() + off, n));
      CHECK((out[0] == -1.0f && out[size_t(n + 1)] == -1.0f));
    }
  CHECK(same_bits(x.data(), x0.data(), total));
  round_to_bf16(Vec<float>(x.data(), total), total);  // in place
  CHECK(same_bits(x.data(), want.data(), total));
  for (size_t i = 0; i < 6; ++i) {  // the NaNs stay NaN, quiet, sign kept
    CHECK(std::isnan(want[i]));
    uint32_t u;
    std::memcpy(&u, &want[i], 4);
    CHECK((u & 0x00400000u) != 0);
    CHECK((u >> 31) == (bits[i] >> 31));
  }
}

TEST_CASE("accumulate_scaled adds a·x into y", "[kernels][simd]") {
  const int64_t n = 777;
  const std::vector<float> x = values(n);
  std::vector<float> y = values(n + 5), want = y;
  const float a = 1.0f / 3.0f;
  for (int64_t i = 0; i < n; ++i) want[size_t(i)] += x[size_t(i)] * a;
  accumulate_scaled(Vec<float>(y.data(), n), CVec<float>(x.data(), n), a, n);
  CHECK(same_bits(y.data(), want.data(), n + 5));  // and nothing past n
}

TEST_CASE("qgz_reorder equals the reference reorder", "[kernels]") {
  for (const auto& [X, Y] : {std::pair{1, 4}, {2, 2}, {4, 1}, {2, 3}}) {
    const int64_t n = int64_t(X) * Y * 10;
    const std::vector<float> g = values(n);
    std::vector<float> got(static_cast<size_t>(n)), want(static_cast<size_t>(n));
    qgz_reorder(CVec<float>(g.data(), n), Vec<float>(got.data(), n), n, X, Y);
    quant_ref::qgz_reorder(g.data(), want.data(), n, X, Y);
    INFO("X=" << X << " Y=" << Y);
    CHECK(same_bits(got.data(), want.data(), n));
  }
  std::vector<float> g(10), o(10);
  CHECK_THROWS_AS(qgz_reorder(CVec<float>(g.data(), 10), Vec<float>(o.data(), 10), 10, 3, 1),
                  std::invalid_argument);
}

TEST_CASE("error feedback: x += e, then e <- b·e + (1-b)(x - deq)", "[kernels]") {
  const int64_t n = 513;
  const float beta = 0.8f;
  std::vector<float> x = values(n), e = values(n + 3), deq = values(n);
  for (auto& d : deq) d *= 0.9f;
  std::vector<float> want_x = x, want_e = e;
  for (int64_t i = 0; i < n; ++i) {
    want_x[size_t(i)] += e[size_t(i)];
    want_e[size_t(i)] = beta * e[size_t(i)] + (1.0f - beta) * (want_x[size_t(i)] - deq[size_t(i)]);
  }
  add_error(Vec<float>(x.data(), n), CVec<float>(e.data(), n), n);
  update_error(Vec<float>(e.data(), n), CVec<float>(x.data(), n), CVec<float>(deq.data(), n), beta, n);
  CHECK(same_bits(x.data(), want_x.data(), n));
  CHECK(same_bits(e.data(), want_e.data(), n + 3));
}
