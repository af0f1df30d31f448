// The engine's kernels and memory on the device, through their host entry
// points (kernels/<op>.hpp) with a device context installed, as the engine
// calls them: device_alloc is cudaMalloc (zero-filled), the transfers are
// cudaMemcpy, the buffer operations and every engine kernel run their CUDA
// twin; each result against the same entry point on the host without a
// context. Bit for bit, except the sums returned in double (a tree order
// against the host's sequential one). Without a device every case says
// "SKIPPED:" (ctest entry cuda_kernels reports a skip).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "kernels/ops/accumulate.hpp"
#include "kernels/ops/adamw.hpp"
#include "kernels/ops/buffer_ops.hpp"
#include "kernels/ops/convert.hpp"
#include "kernels/ops/sum_squares.hpp"
#include "kernels/quant/error_feedback.hpp"
#include "kernels/quant/qgz_reorder.hpp"
#include "kernels/quant/quant_reduce.hpp"
#include "kernels/quant/quantize.hpp"
#include "kernels/runtime/device_buffer.hpp"
#include "kernels/runtime/device_context.hpp"
#include "src/base/errors.hpp"
#include "tests/cuda/device_compare.hpp"

using zeropp::Buffer;
using zeropp::CVec;
using zeropp::Vec;
using namespace zeropp::test;

namespace {

template <class T>
Vec<T> hview(std::vector<T>& v) {
  return Vec<T>(v.data(), int64_t(v.size()));
}

// A stream and a context on it, installed for the object's life.
class OnDevice {
 public:
  OnDevice() : scope_(with_stream()) {}
  ~OnDevice() { cudaStreamDestroy(ctx_.stream); }

 private:
  zeropp::DeviceContext* with_stream() {
    ZCHECK_CUDA(cudaStreamCreate(&ctx_.stream));
    return &ctx_;
  }
  zeropp::DeviceContext ctx_;
  zeropp::ScopedDeviceContext scope_;
};

template <class T>
Buffer<T> upload(const std::vector<T>& h) {
  Buffer<T> b("test", int64_t(h.size()));
  zeropp::copy_to_device(h.data(), b.view());
  return b;
}

template <class T>
std::vector<float> as_floats(const std::vector<T>& v) {
  return std::vector<float>(v.begin(), v.end());
}

}  // namespace

TEST_CASE("device memory and buffer operations under a device context", "[cuda-kernels]") {
  if (!device_or_skip()) return;
  std::mt19937 rng(31);
  const int64_t n = 3 * 384 * 384 + 17;
  const auto w = random_floats(size_t(n), rng), x = random_floats(size_t(n), rng);
  // the host's results, no context
  auto hx = x;
  zeropp::scale(hview(hx), 0.37f);
  const double hsum = zeropp::sum<float>(hview(hx)),
               hdot = zeropp::dot<float>(hview(hx), CVec<float>(w.data(), n));

  OnDevice dev;
  Buffer<float> zeros("zeros", n);
  cudaPointerAttributes attr{};
  ZCHECK_CUDA(cudaPointerGetAttributes(&attr, zeros.data()));
  REQUIRE(attr.type == cudaMemoryTypeDevice);
  REQUIRE(to_host(zeros) == std::vector<float>(size_t(n), 0.0f));

  Buffer<float> dw = upload(w), dx = upload(x);
  REQUIRE(to_host(dx) == x);
  zeropp::scale(dx.view(), 0.37f);
  REQUIRE_AGREES("scale", to_host(dx), hx, kBitExact);
  // Both add the same exact doubles in different orders: each within n·2^-53 of the sum of magnitudes.
  double mag_sum = 0, mag_dot = 0;
  for (size_t i = 0; i < hx.size(); ++i) {
    mag_sum += std::fabs(hx[i]);
    mag_dot += std::fabs(double(hx[i]) * w[i]);
  }
  const double tol = double(n) * 0x1p-52;
  CHECK(std::fabs(zeropp::sum<float>(dx.view()) - hsum) <= tol * mag_sum);
  CHECK(std::fabs(zeropp::dot<float>(dx.view(), dw.view()) - hdot) <= tol * mag_dot);
  zeropp::copy<float>(zeros.view(5, 1000), dx.view(0, 1000));
  auto expect = std::vector<float>(size_t(n), 0.0f);
  std::copy(hx.begin(), hx.begin() + 1000, expect.begin() + 5);
  REQUIRE_AGREES("copy", to_host(zeros), expect, kBitExact);
  zeropp::fill(zeros.view(7, 3), 2.5f);
  std::fill(expect.begin() + 7, expect.begin() + 10, 2.5f);
  REQUIRE_AGREES("fill", to_host(zeros), expect, kBitExact);

  std::vector<uint8_t> bytes(1001);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 13);
  Buffer<uint8_t> b1 = upload(bytes), b2("b2", 1001);
  zeropp::copy<uint8_t>(b2.view(), b1.view());
  zeropp::fill(b2.view(0, 10), uint8_t(7));
  std::fill(bytes.begin(), bytes.begin() + 10, uint8_t(7));
  REQUIRE(to_host(b2) == bytes);
  Buffer<int32_t> tok("tokens", 77);
  zeropp::fill(tok.view(), int32_t(-3));
  REQUIRE(to_host(tok) == std::vector<int32_t>(77, -3));

  // double never lives on the device: it refuses, naming the operation
  std::vector<double> d(4);
  REQUIRE_THROWS_AS(zeropp::scale(Vec<double>(d.data(), 4), 2.0), zeropp::Error);
  REQUIRE_THROWS_AS(zeropp::sum<double>(CVec<double>(d.data(), 4)), zeropp::Error);
}

TEST_CASE("a Buffer is freed by the allocator that made it, whatever context is installed then",
          "[cuda-kernels]") {
  if (!device_or_skip()) return;
  std::optional<Buffer<float>> on_device, on_host(std::in_place, "host", 100);
  {
    OnDevice dev;
    on_device.emplace("device", 100);
    REQUIRE(on_device->place() == zeropp::MemoryPlace::Device);
    REQUIRE(on_host->place() == zeropp::MemoryPlace::Host);
    on_host.reset();  // kokkos_free, not cudaFree
  }
  size_t free_before = 0, free_after = 0, total = 0;
  ZCHECK_CUDA(cudaMemGetInfo(&free_before, &total));
  on_device.reset();  // the context is gone: still cudaFree (a host free would crash or leak)
  ZCHECK_CUDA(cudaMemGetInfo(&free_after, &total));
  CHECK(free_after >= free_before);
}

TEST_CASE("axpy, copy_rows and token copies under a device context", "[cuda-kernels]") {
  if (!device_or_skip()) return;
  std::mt19937 rng(33);
  const int64_t rows = 37, width = 300, src_stride = 311, dst_stride = 517;
  const int64_t n = rows * dst_stride;
  const auto x = random_floats(size_t(n), rng, -10, 10), y0 = random_floats(size_t(n), rng, -10, 10);
  const auto src = random_floats(size_t((rows - 1) * src_stride + width), rng);
  // the host's results, no context
  auto hy = y0, hrows = y0;
  zeropp::axpy(hview(hy), CVec<float>(x.data(), n), -0.37f);
  zeropp::copy_rows(hview(hrows), dst_stride, CVec<float>(src.data(), int64_t(src.size())), src_stride, rows,
                    width);
  std::vector<int32_t> tokens(1001);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = int32_t(i * 7919 % 50257);

  OnDevice dev;
  Buffer<float> dy = upload(y0), dx = upload(x), drows = upload(y0), dsrc = upload(src);
  zeropp::axpy<float>(dy.view(), dx.view(), -0.37f);
  REQUIRE_AGREES("axpy", to_host(dy), hy, kBitExact);
  zeropp::copy_rows<float>(drows.view(), dst_stride, dsrc.view(), src_stride, rows, width);
  REQUIRE_AGREES("copy_rows", to_host(drows), hrows, kBitExact);
  Buffer<int32_t> t1 = upload(tokens), t2("t2", 1001);
  zeropp::copy<int32_t>(t2.view(), t1.view());
  REQUIRE(to_host(t2) == tokens);
  // double still refuses
  std::vector<double> d(4);
  REQUIRE_THROWS_AS(zeropp::axpy(Vec<double>(d.data(), 4), CVec<double>(d.data(), 4), 2.0), zeropp::Error);
}

TEST_CASE("engine elementwise kernels, AdamW and sum of squares under a device context", "[cuda-kernels]") {
  if (!device_or_skip()) return;
  std::mt19937 rng(32);
  const int64_t n = 384 * 384 + 17;
  const auto y0 = random_floats(size_t(n), rng, -10, 10), x = random_floats(size_t(n), rng, -10, 10),
             e0 = random_floats(size_t(n), rng, -0.1f, 0.1f), deq = random_floats(size_t(n), rng, -10, 10);
  const float a = 1.0f / 3, beta = 0.9f;
  auto y = y0, e = e0, p = x, m = e0, v = std::vector<float>(size_t(n), 1e-5f);
  std::vector<uint16_t> bits(static_cast<size_t>(n));
  std::vector<float> wide(static_cast<size_t>(n)), rounded = e0;  // overwritten by x rounded
  auto run = [&](Vec<float> Y, CVec<float> X, Vec<float> E, CVec<float> D, Vec<uint16_t> B, Vec<float> W,
                 Vec<float> R, Vec<float> P, Vec<float> M, Vec<float> V) {
    zeropp::accumulate_scaled(Y, X, a, n);
    zeropp::add_error(Y, E, n);
    zeropp::update_error(E, Y, D, beta, n);
    zeropp::to_bf16(X, B, n);
    zeropp::from_bf16(B, W, n);
    zeropp::round_to_bf16(X, R, n);
    for (int step = 1; step <= 2; ++step)
      zeropp::adamw_update<float>(P, M, V, Y, n, 6e-4f, 0.9f, 0.95f, 1e-8f, 0.1f, step, 0.5f);
    return zeropp::sum_squares<float>(Y, n);
  };
  const double hss = run(hview(y), CVec<float>(x.data(), n), hview(e), CVec<float>(deq.data(), n),
                         hview(bits), hview(wide), hview(rounded), hview(p), hview(m), hview(v));

  OnDevice dev;
  Buffer<float> dy = upload(y0), dx = upload(x), de = upload(e0), dd = upload(deq), dw("wide", n),
                dr = upload(e0), dp = upload(x), dm = upload(e0),
                dv = upload(std::vector<float>(size_t(n), 1e-5f));
  Buffer<uint16_t> db("bits", n);
  const double dss = run(dy.view(), dx.view(), de.view(), dd.view(), db.view(), dw.view(), dr.view(),
                         dp.view(), dm.view(), dv.view());
  REQUIRE_AGREES("accumulate_scaled + add_error", to_host(dy), y, kBitExact);
  REQUIRE_AGREES("update_error", to_host(de), e, kBitExact);
  REQUIRE_AGREES("to_bf16", as_floats(to_host(db)), as_floats(bits), kBitExact);
  REQUIRE_AGREES("from_bf16", to_host(dw), wide, kBitExact);
  REQUIRE_AGREES("round_to_bf16", to_host(dr), rounded, kBitExact);
  REQUIRE_AGREES("adamw param", to_host(dp), p, kBitExact);
  REQUIRE_AGREES("adamw m", to_host(dm), m, kBitExact);
  REQUIRE_AGREES("adamw v", to_host(dv), v, kBitExact);
  INFO("sum of squares: device " << dss << ", host " << hss);
  REQUIRE(std::fabs(dss - hss) <= 1e-11 * hss);
}

TEST_CASE("quantization kernels under a device context, bit for bit", "[cuda-kernels]") {
  if (!device_or_skip()) return;
  std::mt19937 rng(33);
  const int X = 2, Y = 3, k = X * Y;
  for (const int64_t block : {int64_t(128), int64_t(6)}) {  // the vector path and the generic one
    INFO("block " << block);
    const int64_t n = int64_t(k) * block * 7, nb = n / block;
    const auto g = random_floats(size_t(n), rng, -3, 3);
    const auto chunks = random_floats(size_t(n) * k, rng, -3, 3);  // k chunks to sum
    // every output of the host run, in order, as floats
    auto run = [&](auto alloc_f, auto alloc_b, auto down_f, auto down_b) {
      std::vector<std::vector<float>> out;
      auto G = alloc_f(g), C = alloc_f(chunks), F = alloc_f(std::vector<float>(size_t(n) * k));
      auto S8 = alloc_f(std::vector<float>(size_t(nb) * k)), S4 = alloc_f(std::vector<float>(size_t(nb) * k));
      auto Q8 = alloc_b(std::vector<uint8_t>(size_t(n) * k)),
           Q4 = alloc_b(std::vector<uint8_t>(size_t(n) * k / 2));
      auto q8 = [&] { return Vec<int8_t>(reinterpret_cast<int8_t*>(Q8.data()), Q8.size()); };
      zeropp::quantize_int8(C.view(), q8(), S8.view(), n * k, block);
      zeropp::quantize_int4(C.view(), Q4.view(), S4.view(), n * k, block);
      out.push_back(down_b(Q8)), out.push_back(down_b(Q4)), out.push_back(down_f(S8)),
          out.push_back(down_f(S4));
      zeropp::dequantize_int8(q8(), S8.view(), F.view(), n * k, block);
      out.push_back(down_f(F));
      zeropp::dequantize_int4_add(Q4.view(), S4.view(), F.view(), n * k, block);
      out.push_back(down_f(F));
      zeropp::dequantize_int8_bf16(q8(), S8.view(), F.view(), n * k, block);
      out.push_back(down_f(F));
      zeropp::dequantize_int4_bf16(Q4.view(), S4.view(), F.view(), n * k, block);
      out.push_back(down_f(F));
      zeropp::dequant_sum_int8(q8(), S8.view(), k, F.view(0, n), n, block);
      out.push_back(down_f(F));
      zeropp::dequant_sum_int4(Q4.view(), S4.view(), k, F.view(0, n), n, block);
      out.push_back(down_f(F));
      auto R8 = alloc_b(std::vector<uint8_t>(size_t(n))), R4 = alloc_b(std::vector<uint8_t>(size_t(n) / 2));
      auto RS = alloc_f(std::vector<float>(size_t(nb)));
      auto r8 = Vec<int8_t>(reinterpret_cast<int8_t*>(R8.data()), R8.size());
      zeropp::dequant_sum_requant_int8(q8(), S8.view(), k, r8, RS.view(), n, block);
      out.push_back(down_b(R8)), out.push_back(down_f(RS));
      zeropp::dequant_sum_requant_int4(Q4.view(), S4.view(), k, R4.view(), RS.view(), n, block);
      out.push_back(down_b(R4)), out.push_back(down_f(RS));
      zeropp::dequant_sum_requant_int8_to_int4(q8(), S8.view(), k, R4.view(), RS.view(), n, block);
      out.push_back(down_b(R4)), out.push_back(down_f(RS));
      zeropp::dequant_sum_requant_int4_to_int8(Q4.view(), S4.view(), k, r8, RS.view(), n, block);
      out.push_back(down_b(R8)), out.push_back(down_f(RS));
      zeropp::qgz_reorder(G.view(), F.view(0, n), n, X, Y);
      out.push_back(down_f(F));
      zeropp::qgz_reorder_quantize_int8(G.view(), r8, RS.view(), n, X, Y, block);
      out.push_back(down_b(R8)), out.push_back(down_f(RS));
      zeropp::qgz_reorder_quantize_int4(G.view(), R4.view(), RS.view(), n, X, Y, block);
      out.push_back(down_b(R4)), out.push_back(down_f(RS));
      return out;
    };
    // Host: Buffers without a context are host memory.
    auto alloc_f = [](const std::vector<float>& h) { return upload(h); };
    auto alloc_b = [](const std::vector<uint8_t>& h) { return upload(h); };
    auto down_f = [](const Buffer<float>& b) { return to_host(b); };
    auto down_b = [](const Buffer<uint8_t>& b) { return as_floats(to_host(b)); };
    const auto host = run(alloc_f, alloc_b, down_f, down_b);
    OnDevice dev;
    const auto device = run(alloc_f, alloc_b, down_f, down_b);
    REQUIRE(device.size() == host.size());
    for (size_t i = 0; i < host.size(); ++i) {
      INFO("output " << i << " of the sequence above");
      REQUIRE_AGREES("quantization", device[i], host[i], kBitExact);
    }
  }
}
