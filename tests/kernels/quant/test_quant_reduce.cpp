#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>

#include "kernels/quant/quant_reduce.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

namespace {

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

template <int Bits>
using S = typename QuantFormat<Bits>::Storage;

template <int Bits>
void quantize(CVec<float> x, Vec<S<Bits>> q, Vec<float> s, int64_t n, int64_t block) {
  if constexpr (Bits == 8) {
    quantize_int8(x, q, s, n, block);
  } else {
    quantize_int4(x, q, s, n, block);
  }
}
template <int Bits>
void dequantize(CVec<S<Bits>> q, CVec<float> s, Vec<float> x, int64_t n, int64_t block) {
  if constexpr (Bits == 8) {
    dequantize_int8(q, s, x, n, block);
  } else {
    dequantize_int4(q, s, x, n, block);
  }
}

// The fused kernel, its reference, and the final-hop sum for an (in, out) pair.
template <int In, int Out>
void fused(CVec<S<In>> q, CVec<float> s, int k, Vec<S<Out>> qo, Vec<float> so, int64_t n, int64_t block) {
  if constexpr (In == 4) {
    dequant_sum_requant_int4(q, s, k, qo, so, n, block);
  } else if constexpr (Out == 8) {
    dequant_sum_requant_int8(q, s, k, qo, so, n, block);
  } else {
    dequant_sum_requant_int8_to_int4(q, s, k, qo, so, n, block);
  }
}
template <int In, int Out>
void fused_reference(CVec<S<In>> q, CVec<float> s, int k, Vec<S<Out>> qo, Vec<float> so, int64_t n,
                     int64_t block) {
  if constexpr (In == 4) {
    dequant_sum_requant_int4_reference(q, s, k, qo, so, n, block);
  } else if constexpr (Out == 8) {
    dequant_sum_requant_int8_reference(q, s, k, qo, so, n, block);
  } else {
    dequant_sum_requant_int8_to_int4_reference(q, s, k, qo, so, n, block);
  }
}
template <int In>
void sum(CVec<S<In>> q, CVec<float> s, int k, Vec<float> out, int64_t n, int64_t block) {
  if constexpr (In == 4) {
    dequant_sum_int4(q, s, k, out, n, block);
  } else {
    dequant_sum_int8(q, s, k, out, n, block);
  }
}
template <int In>
void sum_reference(CVec<S<In>> q, CVec<float> s, int k, Vec<float> out, int64_t n, int64_t block) {
  if constexpr (In == 4) {
    dequant_sum_int4_reference(q, s, k, out, n, block);
  } else {
    dequant_sum_int8_reference(q, s, k, out, n, block);
  }
}

// k chunks of n gradients (normal 0.01 with a few outliers and one all-zero
// block per chunk), quantized chunk by chunk into q (k*bytes) and s (k*n/block).
template <int Bits>
void make_chunks(int k, int64_t n, int64_t block, std::mt19937& rng, Buf<S<Bits>>& q, Buf<float>& s) {
  const int64_t bytes = QuantFormat<Bits>::bytes(n), nb = n / block;
  q = Buf<S<Bits>>("q", k * bytes);
  s = Buf<float>("s", k * nb);
  std::normal_distribution<float> g(0, 0.01f);
  for (int j = 0; j < k; ++j) {
    Buf<float> x("x", n);
    for (int64_t i = 0; i < n; ++i) x(i) = g(rng);
    x((j * 7) % n) = 0.5f;  // outlier
    if (nb > 1)
      for (int64_t i = 0; i < block; ++i) x(((j + 1) % nb) * block + i) = 0;
    quantize<Bits>(x, sub(q, j * bytes, bytes), sub(s, j * nb, nb), n, block);
  }
}

}  // namespace

TEMPLATE_TEST_CASE_SIG("dequant-sum-requant matches its reference and the unfused composition",
                       "[kernels][quant]", ((int In, int Out), In, Out), (4, 4), (8, 8), (8, 4)) {
  std::mt19937 rng(70 + In + Out);
  for (int k : {1, 2, 3, 4, 8}) {
    for (auto [n, block] : {std::pair<int64_t, int64_t>{64, 64}, {3 * 32, 32}, {5 * 256, 256}, {9 * 2, 2}}) {
      INFO("k " << k << ", n " << n << ", block " << block);
      const int64_t nb = n / block, bytes = QuantFormat<Out>::bytes(n);
      Buf<S<In>> q;
      Buf<float> s;
      make_chunks<In>(k, n, block, rng, q, s);
      Buf<S<Out>> qo("qo", bytes), qo_r("qo_r", bytes), qo_u("qo_u", bytes);
      Buf<float> so("so", nb), so_r("so_r", nb), so_u("so_u", nb), total("total", n), total_r("total_r", n);
      fused<In, Out>(q, s, k, qo, so, n, block);
      fused_reference<In, Out>(q, s, k, qo_r, so_r, n, block);
      require_identical<S<Out>>(qo, qo_r, "q_out vs reference");
      require_identical<float>(so, so_r, "scales_out vs reference");

      // Unfused: the final-hop sum into a full fp32 buffer, then quantize.
      sum<In>(q, s, k, total, n, block);
      sum_reference<In>(q, s, k, total_r, n, block);
      require_identical<float>(total, total_r, "sum vs reference");
      quantize<Out>(total, qo_u, so_u, n, block);
      require_identical<S<Out>>(qo, qo_u, "fused vs unfused q");
      require_identical<float>(so, so_u, "fused vs unfused scales");

      // The sum is deq_0 + deq_1 + ... in that order, in fp32.
      Buf<float> d("d", n), by_hand("by_hand", n);
      const int64_t in_bytes = QuantFormat<In>::bytes(n);
      for (int j = 0; j < k; ++j) {
        dequantize<In>(sub(q, j * in_bytes, in_bytes), sub(s, j * nb, nb), d, n, block);
        for (int64_t i = 0; i < n; ++i) by_hand(i) = j == 0 ? d(i) : by_hand(i) + d(i);
      }
      require_identical<float>(total, by_hand, "sum in order 0..k-1");

      // Requantized within half an output scale of the fp32 sum.
      dequantize<Out>(qo, so, d, n, block);
      for (int64_t i = 0; i < n; ++i) {
        const double sc = so(i / block);
        REQUIRE(std::fabs(double(d(i)) - double(total(i))) <=
                sc * (0.5 + QuantFormat<Out>::kQmax * std::ldexp(1.0, -20)));
      }
    }
  }
}

TEST_CASE("a NaN block in any received chunk makes that block NaN after the reduction", "[kernels][quant]") {
  std::mt19937 rng(80);
  const int k = 3;
  const int64_t block = 16, nb = 4, n = nb * block;
  Buf<uint8_t> q;
  Buf<float> s;
  make_chunks<4>(k, n, block, rng, q, s);
  s(1 * nb + 2) = std::numeric_limits<float>::quiet_NaN();  // chunk 1, block 2 held an Inf or NaN
  Buf<uint8_t> qo("qo", n / 2), qo_r("qo_r", n / 2);
  Buf<float> so("so", nb), so_r("so_r", nb), out("out", n);
  dequant_sum_requant_int4(q, s, k, qo, so, n, block);
  dequant_sum_requant_int4_reference(q, s, k, qo_r, so_r, n, block);
  require_identical<uint8_t>(qo, qo_r, "q_out");
  require_identical<float>(so, so_r, "scales_out");
  for (int64_t b = 0; b < nb; ++b) REQUIRE(std::isnan(so(b)) == (b == 2));
  dequant_sum_int4(q, s, k, out, n, block);
  for (int64_t i = 0; i < n; ++i) REQUIRE(std::isnan(out(i)) == (i / block == 2));
}

TEST_CASE("quant_reduce rejects shapes it cannot handle", "[kernels][quant]") {
  const int64_t n = 32, block = 8;
  Buf<uint8_t> q("q", 2 * n / 2), qo("qo", n / 2);
  Buf<float> s("s", 2 * n / block), so("so", n / block), out("out", n);
  REQUIRE_NOTHROW(dequant_sum_requant_int4(q, s, 2, qo, so, n, block));
  REQUIRE_THROWS_AS(dequant_sum_requant_int4(q, s, 3, qo, so, n, block),
                    std::invalid_argument);  // short input
  REQUIRE_THROWS_AS(dequant_sum_requant_int4(q, s, 0, qo, so, n, block), std::invalid_argument);
  REQUIRE_THROWS_AS(dequant_sum_requant_int4(q, s, 2, qo, so, n, 6), std::invalid_argument);
  REQUIRE_THROWS_AS(dequant_sum_int4(q, s, 2, sub(out, 0, n - 1), n, block), std::invalid_argument);
  Buf<int8_t> q8("q8", 2 * n);
  REQUIRE_THROWS_AS(dequant_sum_requant_int8_to_int4(q8, s, 2, qo, so, n, 7), std::invalid_argument);
}
