#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "kernels/ops/layernorm_seed.hpp"
#include "kernels/ops/matmul.hpp"
#include "kernels/ops/residual.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEMPLATE_TEST_CASE("layernorm + residual seed (fused) matches the unfused composition", "[kernels][simd]",
                   float, double) {
  using T = TestType;
  const std::array<std::array<int, 2>, 4> shapes{{{7, 13}, {1, 1}, {5, 130}, {300, 256}}};  // 300: 3 chunks
  std::mt19937 rng(42);
  for (const auto& [N, C] : shapes) {
    INFO("N=" << N << " C=" << C);
    const int64_t n = int64_t(N) * C;
    auto x = random_buf<T>(n, rng, -2, 3), w = random_buf<T>(C, rng), bias = random_buf<T>(C, rng);
    auto seed_bias = random_buf<T>(C, rng);
    // Garbage in the outputs: every entry is overwritten.
    auto seed = random_buf<T>(n, rng, 50, 60), out = random_buf<T>(n, rng, 50, 60);
    auto mean = random_buf<T>(N, rng, 50, 60), rstd = random_buf<T>(N, rng, 50, 60);
    Buf<T> seed_r("seed_r", n), out_r("out_r", n), mean_r("mean_r", N), rstd_r("rstd_r", N);
    layernorm_seed_forward<T>(out, mean, rstd, seed, x, w, bias, seed_bias, N, C);
    layernorm_seed_forward_reference<T>(out_r, mean_r, rstd_r, seed_r, x, w, bias, seed_bias, N, C);
    require_same_bits<T>(seed, seed_r, "seed");  // one add each
    require_close<T>(out, out_r, ref_tol<T>(), "out");
    require_close<T>(mean, mean_r, ref_tol<T>(), "mean");
    require_close<T>(rstd, rstd_r, ref_tol<T>(), "rstd");
  }
}

// GPT-2's residual after a projection, as the forward now forms it: the seed
// x + b, then the GEMM accumulating y·W onto it, against the composition it
// replaced, x + (y·W + b) (the projection with its bias, then the residual add).
// The same terms in another order: within a few roundings of the terms' magnitude.
TEMPLATE_TEST_CASE("residual seeded by the LayerNorm pass equals x + (y·W + b) within rounding", "[kernels]",
                   float, double) {
  using T = TestType;
  std::mt19937 rng(43);
  const int N = 40, C = 48;
  for (int K : {48, 192, 1024}) {  // K: the projection's input width (C, or 4C for the MLP)
    INFO("K=" << K);
    auto x = random_buf<T>(int64_t(N) * C, rng, -3, 3), y = random_buf<T>(int64_t(N) * K, rng);
    auto W = random_buf<T>(int64_t(K) * C, rng), b = random_buf<T>(C, rng);
    auto w = random_buf<T>(C, rng), lb = random_buf<T>(C, rng);
    Buf<T> res("res", int64_t(N) * C), out("out", int64_t(N) * C), mean("mean", N), rstd("rstd", N);
    layernorm_seed_forward<T>(out, mean, rstd, res, x, w, lb, b, N, C);
    matmul_forward_accumulate<T>(res, y, W, N, K, C);

    Buf<T> proj("proj", int64_t(N) * C), ref("ref", int64_t(N) * C);
    matmul_forward_reference<T>(proj, y, W, b, N, K, C);
    residual_forward_reference<T>(ref, x, proj, int64_t(N) * C);
    // The accumulating reference twin: (x + b) + y·W summed in the reference's order.
    auto res_r = copy_of<T>(x);
    for (int64_t i = 0; i < int64_t(N) * C; ++i) res_r(i) += b(i % C);
    matmul_forward_accumulate_reference<T>(res_r, y, W, N, K, C);

    const double eps = std::numeric_limits<T>::epsilon();
    for (int64_t n = 0; n < N; ++n)
      for (int j = 0; j < C; ++j) {
        double mag = std::fabs(double(x(n * C + j))) + std::fabs(double(b(j)));
        for (int k = 0; k < K; ++k) mag += std::fabs(double(y(n * K + k)) * double(W(int64_t(k) * C + j)));
        const int64_t i = n * C + j;
        // Sequential sums of K + 2 terms in either order: at most (K + 2) roundings, usually far fewer.
        const double bound = (K + 2) * eps * mag;
        INFO("[" << n << "," << j << "] " << res(i) << " vs " << ref(i) << " / " << res_r(i));
        REQUIRE(std::fabs(double(res(i)) - double(ref(i))) <= bound);
        REQUIRE(std::fabs(double(res(i)) - double(res_r(i))) <= bound);
      }
  }
}
