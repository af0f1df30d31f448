// kernels/quant/quant_ref.hpp: the raw-pointer references shared with tools/gpu_check
// (which checks the CUDA kernels against them) agree bit for bit with the
// Kokkos fast kernels, reject the same shapes, and reorder as qgZ does.
#include <catch2/catch.hpp>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernels/quant/quant_reduce.hpp"
#include "kernels/quant/quant_ref.hpp"
#include "kernels/quant/quantize.hpp"

using namespace zeropp;

namespace {

template <class T>
bool same_bits(const T* a, const T* b, int64_t n) {
  return std::memcmp(a, b, size_t(n) * sizeof(T)) == 0;
}

// Normal values plus the adversarial blocks of the kernel tests: zeros, a huge
// value, denormals, tiny normals, a NaN, an Inf, values near FLT_MAX.
std::vector<float> inputs(int64_t n, int64_t block, std::mt19937& rng) {
  std::vector<float> x(static_cast<size_t>(n));
  std::normal_distribution<float> g(0, 0.02f);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& v : x) v = g(rng);
  for (int64_t b = 0; b < n / block; ++b) {
    float* xb = x.data() + b * block;
    switch (b % 8) {
      case 1:
        std::fill(xb, xb + block, 0.0f);
        break;
      case 2:
        xb[block / 3] = -3e30f;
        break;
      case 3:
        for (int64_t i = 0; i < block; ++i) xb[i] = u(rng) * 1e-39f;
        break;
      case 4:
        for (int64_t i = 0; i < block; ++i) xb[i] = u(rng) * 1e-25f;
        break;
      case 5:
        xb[1] = std::numeric_limits<float>::quiet_NaN();
        break;
      case 6:
        xb[0] = -std::numeric_limits<float>::infinity();
        break;
      case 7:
        for (int64_t i = 0; i < block; ++i) xb[i] = u(rng) * 3.4e38f;
        break;
      default:
        break;
    }
  }
  return x;
}

template <int Bits>
void quantize_fast(const std::vector<float>& x, std::vector<typename QuantFormat<Bits>::Storage>& q,
                   std::vector<float>& s, int64_t n, int64_t block) {
  CVec<float> xv(x.data(), n);
  Vec<typename QuantFormat<Bits>::Storage> qv(q.data(), q.size());
  Vec<float> sv(s.data(), s.size());
  if constexpr (Bits == 8)
    quantize_int8(xv, qv, sv, n, block);
  else
    quantize_int4(xv, qv, sv, n, block);
}

}  // namespace

TEMPLATE_TEST_CASE_SIG("quant_ref matches the Kokkos kernels bit for bit", "[kernels][quant]",
                       ((int Bits), Bits), 8, 4) {
  using St = typename QuantFormat<Bits>::Storage;
  std::mt19937 rng(7 + Bits);
  for (int64_t block : {int64_t(2), int64_t(6), int64_t(64), int64_t(256)}) {
    const int64_t n = block * 24;
    const auto x = inputs(n, block, rng);
    std::vector<St> q(size_t(QuantFormat<Bits>::bytes(n))), qr(q.size());
    std::vector<float> s(size_t(n / block)), sr(s.size());
    quantize_fast<Bits>(x, q, s, n, block);
    quant_ref::quantize<Bits>(x.data(), qr.data(), sr.data(), n, block);
    REQUIRE(same_bits(q.data(), qr.data(), int64_t(q.size())));
    REQUIRE(same_bits(s.data(), sr.data(), int64_t(s.size())));
    // dequantize and dequantize_add
    std::vector<float> d(static_cast<size_t>(n), 0.5f), dr(d);
    const CVec<St> qv(q.data(), q.size());
    const CVec<float> sv(s.data(), s.size());
    if constexpr (Bits == 8)
      dequantize_int8_add(qv, sv, Vec<float>(d.data(), n), n, block);
    else
      dequantize_int4_add(qv, sv, Vec<float>(d.data(), n), n, block);
    quant_ref::dequantize<Bits, true>(q.data(), s.data(), dr.data(), n, block);
    for (int64_t i = 0; i < n; ++i) {
      const bool both_nan = std::isnan(d[size_t(i)]) && std::isnan(dr[size_t(i)]);
      if (!both_nan) REQUIRE(std::memcmp(&d[size_t(i)], &dr[size_t(i)], 4) == 0);
    }
  }
}

TEST_CASE("quant_ref's fused-reduction references match quant_reduce", "[kernels][quant]") {
  std::mt19937 rng(11);
  const int k = 5;
  const int64_t block = 64, n = 64 * 12;
  // k int8 chunks, then int8 -> int4 and int8 -> int8 requantization, and the final sum.
  std::vector<int8_t> q(static_cast<size_t>(k * n));
  std::vector<float> s(size_t(k * n / block));
  for (int j = 0; j < k; ++j) {
    const auto x = inputs(n, block, rng);
    quant_ref::quantize<8>(x.data(), q.data() + j * n, s.data() + j * n / block, n, block);
  }
  const CVec<int8_t> qv(q.data(), q.size());
  const CVec<float> sv(s.data(), s.size());
  std::vector<uint8_t> q4(size_t(n / 2)), q4r(q4.size());
  std::vector<float> s4(size_t(n / block)), s4r(s4.size());
  dequant_sum_requant_int8_to_int4(qv, sv, k, Vec<uint8_t>(q4.data(), q4.size()),
                                   Vec<float>(s4.data(), s4.size()), n, block);
  quant_ref::dequant_sum_requant<8, 4>(q.data(), s.data(), k, q4r.data(), s4r.data(), n, block);
  REQUIRE(same_bits(q4.data(), q4r.data(), int64_t(q4.size())));
  REQUIRE(same_bits(s4.data(), s4r.data(), int64_t(s4.size())));
  std::vector<float> sum(static_cast<size_t>(n)), sumr(static_cast<size_t>(n));
  dequant_sum_int8(qv, sv, k, Vec<float>(sum.data(), n), n, block);
  quant_ref::dequant_sum<8>(q.data(), s.data(), k, sumr.data(), n, block);
  for (int64_t i = 0; i < n; ++i)
    if (!(std::isnan(sum[size_t(i)]) && std::isnan(sumr[size_t(i)])))
      REQUIRE(std::memcmp(&sum[size_t(i)], &sumr[size_t(i)], 4) == 0);
}

TEST_CASE("quant_ref: the documented int4 example and qgZ's reorder", "[kernels][quant]") {
  const float x[4] = {1, -1, 7, -7};
  uint8_t q[2];
  float s;
  quant_ref::quantize<4>(x, q, &s, 4, 4);
  REQUIRE(s == 1.0f);
  REQUIRE(q[0] == 0xF1);
  REQUIRE(q[1] == 0x97);
  // X = 2 ranks per node, Y = 3 nodes, s = 2: slice p = y*X + x holds {10p, 10p + 1}.
  const int X = 2, Y = 3;
  std::vector<float> g(12), r(12);
  for (int p = 0; p < 6; ++p) g[size_t(2 * p)] = float(10 * p), g[size_t(2 * p + 1)] = float(10 * p + 1);
  quant_ref::qgz_reorder(g.data(), r.data(), 12, X, Y);
  // chunk 0 = [S0, S2, S4], chunk 1 = [S1, S3, S5]
  const std::vector<float> want = {0, 1, 20, 21, 40, 41, 10, 11, 30, 31, 50, 51};
  REQUIRE(r == want);
}

TEST_CASE("quant_ref rejects the shapes check_quant_args rejects, with the same message",
          "[kernels][quant]") {
  struct Case {
    int bits;
    int64_t n, block;
  };
  for (const Case& c : {Case{8, 10, 4}, Case{4, 12, 3}, Case{8, 8, 0}, Case{4, -2, 2}, Case{5, 8, 8}}) {
    std::string a, b;
    try {
      check_quant_args("who", c.bits, c.n, c.block, 1 << 20, 1 << 20, 1 << 20);
    } catch (const std::invalid_argument& e) {
      a = e.what();
    }
    try {
      quant_ref::check_shape("who", c.bits, c.n, c.block);
    } catch (const std::invalid_argument& e) {
      b = e.what();
    }
    INFO(c.bits << " " << c.n << " " << c.block);
    REQUIRE(!a.empty());
    REQUIRE(a == b);
  }
}
