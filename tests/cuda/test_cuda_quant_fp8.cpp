// The fp8 (e4m3) weight-gather scheme's CUDA twins (kernels/cuda/quant_fp8.cuh)
// against the host's (kernels/quant/quant_fp8_ref.hpp), bit for bit: codes, scales and
// dequantized values (a NaN block compares as NaN: the GPU's NaN payload
// differs). "SKIPPED:" without a device.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cuda/quant_fp8.cuh"
#include "kernels/quant/quant_fp8_ref.hpp"
#include "tests/cuda/device_compare.hpp"

using namespace zeropp::test;
namespace fp8 = zeropp::fp8;

namespace {

// Blocks of `block` values: normal ones; one whose largest is 448, so that
// scale = 1 and every e4m3 value, every tie point between two and its
// neighbours reach the converter unscaled; an all-zero block; one reaching
// e4m3's subnormals; a tiny (< 2^-64) and a denormal one; a NaN and an Inf block.
std::vector<float> fp8_blocks(int64_t block, std::mt19937& rng) {
  std::normal_distribution<float> g(0, 0.02f);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x;
  for (int b = 0; b < 8; ++b)
    for (int64_t i = 0; i < block; ++i) x.push_back(b == 0 || b == 2 ? 0.0f : g(rng));
  std::vector<float> grid;  // every non-negative e4m3 value, the midpoints and their neighbours
  for (int c = 0; c < 0x7e; ++c) {
    const float lo = fp8::decode(uint8_t(c)), mid = (lo + fp8::decode(uint8_t(c + 1))) / 2;
    grid.insert(grid.end(), {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 448.0f)});
  }
  for (size_t j = 0; j < grid.size(); ++j) {  // the first block of each group holds 448
    if (j % size_t(block - 1) == 0) x.push_back(448.0f);
    x.push_back(j % 2 ? -grid[j] : grid[j]);
  }
  while (x.size() % size_t(block)) x.push_back(0.0f);
  const size_t at = x.size();
  for (int b = 0; b < 5; ++b)
    for (int64_t i = 0; i < block; ++i) {
      const float r = u(rng);
      x.push_back(b == 0 ? (i == 0 ? 3.0f : r * 0x1p-12f) : b == 1 ? r * 1e-25f : b == 2 ? r * 1e-39f : r);
    }
  x[at + 3 * size_t(block) + 1] = std::numeric_limits<float>::quiet_NaN();
  x[at + 4 * size_t(block)] = -std::numeric_limits<float>::infinity();
  return x;
}

bool same(float a, float b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("CUDA fp8 quantize and dequantize bit for bit against the host's", "[cuda-kernels]") {
  if (!device_or_skip()) return;
  std::mt19937 rng(88);
  for (int64_t block : {int64_t(2), int64_t(32), int64_t(256), int64_t(96)}) {
    INFO("block " << block);
    const std::vector<float> x = fp8_blocks(block, rng);
    const int64_t n = int64_t(x.size()), nb = n / block;
    std::vector<uint8_t> q(static_cast<size_t>(n));
    std::vector<float> s(static_cast<size_t>(nb));
    fp8::quantize(x.data(), q.data(), s.data(), n, block);
    DeviceCopy<float> d_x(x), d_s(nan_filled(size_t(nb)));
    DeviceCopy<uint8_t> d_q(std::vector<uint8_t>(size_t(n), 0xff));
    zeropp::cuda::quantize_fp8(d_x.get(), d_q.get(), d_s.get(), n, block);
    const std::vector<uint8_t> gq = d_q.host();
    const std::vector<float> gs = d_s.host();
    for (int64_t i = 0; i < n; ++i) {
      INFO("element " << i << ": x " << x[size_t(i)]);
      REQUIRE(int(gq[size_t(i)]) == int(q[size_t(i)]));
    }
    for (int64_t b = 0; b < nb; ++b) REQUIRE(std::memcmp(&gs[size_t(b)], &s[size_t(b)], sizeof(float)) == 0);
    for (bool bf16 : {false, true}) {
      INFO((bf16 ? "bf16" : "fp32"));
      std::vector<float> d(static_cast<size_t>(n));
      bf16 ? fp8::dequantize<true>(q.data(), s.data(), d.data(), n, block)
           : fp8::dequantize<false>(q.data(), s.data(), d.data(), n, block);
      DeviceCopy<float> d_d(nan_filled(size_t(n)));
      zeropp::cuda::dequantize_fp8(d_q.get(), d_s.get(), d_d.get(), n, block, bf16);
      const std::vector<float> gd = d_d.host();
      for (int64_t i = 0; i < n; ++i) {
        INFO("element " << i << ": device " << gd[size_t(i)] << ", host " << d[size_t(i)]);
        REQUIRE(same(gd[size_t(i)], d[size_t(i)]));
      }
    }
  }
}
