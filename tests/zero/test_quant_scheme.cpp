// QuantScheme: its sizes (pure functions; qwZ's packed chunk keeps its scales
// aligned) and its dispatch onto the kernels, bit for bit against the plain
// references of kernels/quant/quant_ref.hpp (through core/qgz_model.hpp's round_trip).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <vector>

#include "src/zero/quant_scheme.hpp"
#include "zero/qgz_model.hpp"

using namespace zeropp;

namespace {

QuantScheme scheme(int bits, int64_t block) { return {bits, block, ScaleDType::F32}; }

// n values of mixed magnitude and sign, deterministic.
std::vector<float> values(int64_t n, int seed) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[size_t(i)] = std::sin(float(i * 7 + seed)) * float(1 + (i + seed) % 5);
  return x;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("QuantScheme sizes: payload, scales and wire bytes", "[quant-scheme]") {
  CHECK(scheme(8, 256).payload_bytes(1024) == 1024);
  CHECK(scheme(4, 256).payload_bytes(1024) == 512);
  CHECK(scheme(8, 256).scale_bytes(1024) == 16);
  CHECK(scheme(4, 32).scale_bytes(1024) == 128);
  CHECK(scheme(8, 32).wire_bytes(1024) == 1024 + 128);
  CHECK(scheme(4, 256).wire_bytes(1024) == 512 + 16);
  CHECK(scheme(4, 2).payload_bytes(0) == 0);
}

TEST_CASE("qwZ's packed chunk: scales and chunks start at 16-byte boundaries", "[quant-scheme]") {
  // int4 with small blocks misaligned them before: 2 values are 1 payload byte
  CHECK(scheme(4, 2).packed_scales_offset(2) == 16);
  CHECK(scheme(4, 2).packed_bytes(2) == 16 + 16);
  CHECK(scheme(8, 256).packed_scales_offset(256) == 256);  // already aligned: no padding
  CHECK(scheme(8, 256).packed_bytes(256) == 256 + 16);
  CHECK(scheme(4, 32).packed_bytes(1024) == 512 + 128);
  for (int bits : {8, 4})
    for (int64_t block : {2, 4, 8, 32, 256})
      for (int64_t k = 1; k <= 40; ++k) {
        const QuantScheme q = scheme(bits, block);
        const int64_t n = k * block, payload = q.payload_bytes(n);
        const int64_t off = q.packed_scales_offset(n), bytes = q.packed_bytes(n);
        INFO("n=" << n << " bits=" << bits << " block=" << block);
        CHECK(off % 16 == 0);
        CHECK(bytes % 16 == 0);
        CHECK(off >= payload);
        CHECK(off < payload + 16);
        CHECK(bytes >= off + q.scale_bytes(n));
        CHECK(bytes < off + q.scale_bytes(n) + 16);
      }
}

TEST_CASE("QuantScheme quantizes, dequantizes and sums as the references do", "[quant-scheme]") {
  const int64_t block = 32, n = 8 * block;
  const int k = 3;
  for (int bits : {8, 4}) {
    const QuantScheme q = scheme(bits, block);
    INFO("bits " << bits);
    const std::vector<float> x = values(n, bits);
    // plain and packed round trips
    std::vector<uint8_t> payload(static_cast<size_t>(q.payload_bytes(n))),
        packed(static_cast<size_t>(q.packed_bytes(n)));
    std::vector<float> sc(static_cast<size_t>(n / block)), out(static_cast<size_t>(n)),
        out_packed(static_cast<size_t>(n));
    q.quantize(x.data(), payload.data(), sc.data(), n);
    q.dequantize(payload.data(), sc.data(), out.data(), n);
    CHECK(same_bits(out, test::round_trip(bits, x, block)));
    q.quantize_packed(x.data(), packed.data(), n);
    q.dequantize_packed(packed.data(), out_packed.data(), n);
    CHECK(same_bits(out_packed, out));
    // k chunks summed in chunk order, then requantized in each width
    std::vector<uint8_t> qk(static_cast<size_t>(q.payload_bytes(n) * k));
    std::vector<float> sck(static_cast<size_t>(n / block * k)), want(size_t(n), 0.0f);
    for (int j = 0; j < k; ++j) {
      const std::vector<float> xj = values(n, 10 * j + bits);
      q.quantize(xj.data(), qk.data() + j * q.payload_bytes(n), sck.data() + j * (n / block), n);
      const std::vector<float> dj = test::round_trip(bits, xj, block);
      for (int64_t i = 0; i < n; ++i)
        want[size_t(i)] = j == 0 ? dj[size_t(i)] : want[size_t(i)] + dj[size_t(i)];
    }
    std::vector<float> sum(static_cast<size_t>(n));
    q.dequantize_sum(qk.data(), sck.data(), k, sum.data(), n);
    CHECK(same_bits(sum, want));
    for (int to_bits : {8, 4}) {
      INFO("requantized to " << to_bits << " bits");
      const QuantScheme to = scheme(to_bits, block);
      std::vector<uint8_t> q_out(static_cast<size_t>(to.payload_bytes(n)));
      std::vector<float> sc_out(static_cast<size_t>(n / block)), got(static_cast<size_t>(n));
      q.dequant_sum_requant(qk.data(), sck.data(), k, to, q_out.data(), sc_out.data(), n);
      to.dequantize(q_out.data(), sc_out.data(), got.data(), n);
      CHECK(same_bits(got, test::round_trip(to_bits, want, block)));
    }
  }
}
