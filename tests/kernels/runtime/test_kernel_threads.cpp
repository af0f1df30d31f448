// Thread-count invariance of the elementwise kernels (train.threads,
// kernels/runtime/parallel_chunks.hpp): each gives bitwise the same outputs on one and
// on two threads. The shapes span several chunks of rows, elements and columns.
#include <omp.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <set>
#include <vector>

#include "kernels/ops/accumulate.hpp"
#include "kernels/ops/bias_gelu.hpp"
#include "kernels/ops/causal_softmax.hpp"
#include "kernels/ops/convert.hpp"
#include "kernels/ops/encoder.hpp"
#include "kernels/ops/gelu.hpp"
#include "kernels/ops/layernorm.hpp"
#include "kernels/ops/layernorm_seed.hpp"
#include "kernels/ops/residual.hpp"
#include "kernels/ops/sum_squares.hpp"
#include "kernels/runtime/parallel_chunks.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

namespace {

constexpr int N = 300, C = 256, OC = 1024,
              Tn = 64;  // 3 row chunks of C, 10 of OC; 2 column strips on 2 threads

// run(outputs) fills `outputs` from inputs drawn with a fixed seed.
template <class R>
void same_on_1_and_2_threads(R run) {
  std::vector<std::vector<float>> out[2];
  for (int threads : {1, 2}) {
    set_kernel_threads(threads);
    run(out[threads - 1]);
  }
  set_kernel_threads(1);
  REQUIRE(out[0].size() == out[1].size());
  for (size_t k = 0; k < out[0].size(); ++k) {
    INFO("output " << k);
    REQUIRE(out[0][k].size() == out[1][k].size());
    REQUIRE(std::memcmp(out[0][k].data(), out[1][k].data(), out[0][k].size() * sizeof(float)) == 0);
  }
}

std::vector<float> vec(CVec<float> v) { return std::vector<float>(v.data(), v.data() + v.size()); }

}  // namespace

TEST_CASE("parallel_chunks runs on the requested threads, fixed chunks", "[kernels][threads]") {
  std::vector<int> owner(10, -1);
  std::vector<int64_t> begin(10, -1);
  set_kernel_threads(2);
  parallel_chunks(100, 11, [&](int64_t i, int64_t b, int64_t e) {
    owner[size_t(i)] = omp_get_thread_num();
    begin[size_t(i)] = b;
    REQUIRE(e == std::min<int64_t>(100, b + 11));
  });
  set_kernel_threads(1);
  for (int64_t i = 0; i < 10; ++i) REQUIRE(begin[size_t(i)] == 11 * i);
  REQUIRE(std::set<int>(owner.begin(), owner.end()) == std::set<int>{0, 1});
  REQUIRE_THROWS_AS(set_kernel_threads(0), std::invalid_argument);
}

TEST_CASE("column_chunk: the whole width on one thread, a strip of 16s per thread on more",
          "[kernels][threads]") {
  REQUIRE(column_chunk(1024) == 1024);
  REQUIRE(chunk_count(5, column_chunk(5)) == 1);
  set_kernel_threads(2);
  CHECK(column_chunk(1024) == 512);
  CHECK(column_chunk(5) == 16);  // one strip
  set_kernel_threads(3);
  CHECK(column_chunk(1000) == 336);  // ceil(1000 / 3) = 334, up to a multiple of 16: 3 strips
  CHECK(chunk_count(1000, column_chunk(1000)) == 3);
  set_kernel_threads(1);
}

TEST_CASE("elementwise kernels give the same results on 1 and 2 threads", "[kernels][threads]") {
  SECTION("gelu, bias_gelu") {
    same_on_1_and_2_threads([](auto& out) {
      std::mt19937 rng(1);
      auto x = random_buf<float>(int64_t(N) * OC, rng), dy = random_buf<float>(int64_t(N) * OC, rng);
      auto bias = random_buf<float>(OC, rng), dbias = random_buf<float>(OC, rng);
      Buf<float> y("y", x.size()), dx("dx", x.size());
      gelu_forward<float>(y, x, x.size());
      gelu_backward<float>(dx, x, dy, x.size());
      out = {vec(y), vec(dx)};
      bias_gelu_backward<float>(dx, dbias, x, dy, N, OC);
      for (auto* b : {&dx, &dbias}) out.push_back(vec(*b));
    });
  }
  SECTION("layernorm, layernorm_seed, residual") {
    same_on_1_and_2_threads([](auto& out) {
      std::mt19937 rng(2);
      const int64_t n = int64_t(N) * C;
      auto x = random_buf<float>(n, rng), a = random_buf<float>(n, rng), dy = random_buf<float>(n, rng);
      auto w = random_buf<float>(C, rng), b = random_buf<float>(C, rng);
      auto dw = random_buf<float>(C, rng), db = random_buf<float>(C, rng), dx = random_buf<float>(n, rng);
      Buf<float> y("y", n), res("res", n), mean("mean", N), rstd("rstd", N);
      layernorm_forward<float>(y, mean, rstd, x, w, b, N, C);
      layernorm_backward<float>(dx, dw, db, dy, x, w, mean, rstd, N, C);
      for (auto* v : {&y, &mean, &rstd, &dx, &dw, &db}) out.push_back(vec(*v));
      layernorm_seed_forward<float>(y, mean, rstd, res, a, w, b, db, N, C);
      residual_backward<float>(a, x, dy, n);
      for (auto* v : {&res, &y, &mean, &rstd, &a, &x}) out.push_back(vec(*v));
      residual_forward<float>(res, a, x, n);
      out.push_back(vec(res));
    });
  }
  SECTION("causal_softmax") {
    same_on_1_and_2_threads([](auto& out) {
      std::mt19937 rng(3);
      const int64_t rows = int64_t(8) * Tn * 12, n = rows * Tn;  // 12 chunks of 512 rows
      auto pre = random_buf<float>(n, rng, -4, 4), datt = random_buf<float>(n, rng);
      Buf<float> att("att", n), dpre("dpre", n);
      causal_softmax_forward<float>(att, pre, rows, Tn);
      causal_softmax_backward<float>(dpre, att, datt, rows, Tn, 0.125f);
      out = {vec(att), vec(dpre)};
    });
  }
  SECTION("encoder") {
    same_on_1_and_2_threads([](auto& out) {
      std::mt19937 rng(4);
      const int B = 5, V = 50;  // 5·64 rows, tokens repeated
      auto tok = random_ints(int64_t(B) * Tn, V, rng);
      auto wte = random_buf<float>(int64_t(V) * C, rng), wpe = random_buf<float>(int64_t(Tn) * C, rng);
      auto dout = random_buf<float>(int64_t(B) * Tn * C, rng);
      auto dwte = random_buf<float>(wte.size(), rng), dwpe = random_buf<float>(wpe.size(), rng);
      Buf<float> y("y", dout.size());
      encoder_forward<float>(y, tok, wte, wpe, B, Tn, C);
      encoder_backward<float>(dwte, dwpe, dout, tok, B, Tn, C);
      out = {vec(y), vec(dwte), vec(dwpe)};
      encoder_backward<float>(dwte, Vec<float>(), dout, tok, B, Tn, C);  // no position table (LLaMA)
      out.push_back(vec(dwte));
    });
  }
  SECTION("sum_squares, accumulate, convert") {
    same_on_1_and_2_threads([](auto& out) {
      std::mt19937 rng(5);
      const int64_t n = (int64_t(1) << 20) + 3;  // 33 chunks, the last partial
      auto x = random_buf<float>(n, rng, -100, 100), y = random_buf<float>(n, rng);
      const double s = sum_squares<float>(x, n);
      out = {std::vector<float>(2)};  // the double's bits
      std::memcpy(out[0].data(), &s, sizeof s);
      accumulate_scaled(y, x, 0.3f, n);
      Buf<uint16_t> h("h", n);
      to_bf16(y, h, n);
      Buf<float> back("back", n);
      from_bf16(h, back, n);
      Buf<float> rounded("rounded", n);
      round_to_bf16(y, rounded, n);
      round_to_bf16(x, n);
      for (auto* v : {&y, &back, &rounded, &x}) out.push_back(vec(*v));
    });
  }
}
