// The buffer operations (kernels/ops/buffer_ops.hpp) on the host against plain
// loops, through Buffer<T> and the explicit transfers, as the engine and the
// models use them. Their CUDA twins are checked on the device in
// tests/cuda/test_cuda_engine_kernels.cpp.
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/ops/buffer_ops.hpp"
#include "kernels/runtime/device_buffer.hpp"

using namespace zeropp;

namespace {

template <class T>
std::vector<T> random_values(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> d(-2, 2);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& x : v) x = T(d(rng));
  return v;
}

template <class T>
Buffer<T> on_device(const std::vector<T>& h) {
  Buffer<T> b("test", int64_t(h.size()));
  copy_to_device(h.data(), b.view());
  return b;
}

}  // namespace

TEMPLATE_TEST_CASE("buffer ops: fill, copy, scale, sum, dot against plain loops", "[kernels][buffer-ops]",
                   float, double) {
  using T = TestType;
  std::mt19937 rng(21);
  const int64_t n = 10007, off = 13, m = 4001;  // a sub-range too: the ops touch exactly their view
  const auto w = random_values<T>(n, rng), x = random_values<T>(n, rng);
  Buffer<T> bw = on_device(w), bx = on_device(x);
  REQUIRE(to_host(bx) == x);  // the transfers themselves

  double s = 0, d = 0;
  for (int64_t i = 0; i < n; ++i) {
    s += double(x[size_t(i)]);
    d += double(w[size_t(i)]) * double(x[size_t(i)]);
  }
  CHECK(sum<T>(bx.view()) == Approx(s).epsilon(1e-12));
  CHECK(dot<T>(bw.view(), bx.view()) == Approx(d).epsilon(1e-12));
  double s_sub = 0;
  for (int64_t i = off; i < off + m; ++i) s_sub += double(x[size_t(i)]);
  CHECK(sum<T>(bx.view(off, m)) == Approx(s_sub).epsilon(1e-12));

  const T a = T(-0.37);
  auto scaled = x;
  for (int64_t i = off; i < off + m; ++i) scaled[size_t(i)] *= a;
  scale(bx.view(off, m), a);
  CHECK(to_host(bx) == scaled);

  auto copied = w;
  for (int64_t i = 0; i < m; ++i) copied[size_t(off + i)] = scaled[size_t(i)];
  copy<T>(bw.view(off, m), bx.view(0, m));
  CHECK(to_host(bw) == copied);

  auto filled = copied;
  for (int64_t i = off; i < off + m; ++i) filled[size_t(i)] = T(2.5);
  fill(bw.view(off, m), T(2.5));
  CHECK(to_host(bw) == filled);
  fill(bw, T(0));
  CHECK(sum<T>(bw.view()) == 0.0);
}

TEMPLATE_TEST_CASE("buffer ops: fill and copy of token and byte buffers", "[kernels][buffer-ops]", int32_t,
                   uint8_t) {
  using T = TestType;
  std::vector<T> h(517);
  for (size_t i = 0; i < h.size(); ++i) h[i] = T(i * 7 + 3);
  Buffer<T> a = on_device(h), b("b", int64_t(h.size()));
  copy<T>(b.view(), a.view());
  CHECK(to_host(b) == h);
  fill(a.view(100, 50), T(9));
  for (size_t i = 100; i < 150; ++i) h[i] = T(9);
  CHECK(to_host(a) == h);
}
