// The chunked LM head + cross-entropy (kernels/ops/lm_head_loss.hpp) against the
// unchunked composition of matmul and softmax cross-entropy, for chunks of
// one row, an odd number of rows, all rows and more than all rows.
#include <catch2/catch.hpp>

#include "kernels/ops/lm_head_loss.hpp"
#include "tests/kernels/bf16_kernels.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

namespace {

// Runs both on the same inputs (garbage in dx, dW and losses: both overwrite)
// and requires the losses and both gradients within tol.
template <class T>
void chunked_vs_unchunked(int N, int C, int V, int rows, bool weighted, bool backward, Precision prec,
                          double tol, std::mt19937& rng) {
  INFO("N=" << N << " C=" << C << " V=" << V << " rows=" << rows << " weighted " << weighted << " backward "
            << backward << " " << deck_name(prec));
  auto x = random_buf<T>(int64_t(N) * C, rng), W = random_buf<T>(int64_t(V) * C, rng);
  auto targets = random_ints(N, V, rng);
  auto weights = weighted ? random_buf<T>(N, rng, -2, 2) : Buf<T>("unweighted", 0);
  auto dx = random_buf<T>(int64_t(N) * C, rng, 50, 60), dW = random_buf<T>(int64_t(V) * C, rng, 50, 60);
  auto losses = random_buf<T>(N, rng, 50, 60);
  Buf<T> dx_r("dx_r", size_t(N) * C), dW_r("dW_r", size_t(V) * C), losses_r("losses_r", size_t(N));
  Buf<T> scratch("scratch", size_t(std::min(rows, N)) * V);
  const Vec<T> none;
  lm_head_loss<T>(backward ? Vec<T>(dx) : none, backward ? Vec<T>(dW) : none, losses, scratch, x, W, targets,
                  weights, N, C, V, rows, prec);
  lm_head_loss_reference<T>(dx_r, dW_r, losses_r, x, W, targets, weights, N, C, V, prec);
  require_close<T>(losses, losses_r, tol, "losses");
  if (!backward) return;
  require_close<T>(dx, dx_r, tol, "dx");
  require_close<T>(dW, dW_r, tol, "dW");
}

}  // namespace

TEMPLATE_TEST_CASE("chunked LM head + cross-entropy equals the unchunked composition", "[kernels]", float,
                   double) {
  using T = TestType;
  std::mt19937 rng(61);
  const int N = 11, C = 6, V = 37;
  for (int rows : {1, 3, N, N + 5})
    for (bool weighted : {false, true})
      for (bool backward : {true, false})
        chunked_vs_unchunked<T>(N, C, V, rows, weighted, backward, Precision::FP32, ref_tol<T>(), rng);
}

TEST_CASE("chunked LM head + cross-entropy in bf16 equals the unchunked composition", "[kernels][bf16]") {
  std::mt19937 rng(62);
  const int N = 9, C = 16, V = 70;
  for_each_bf16_kernel([&](Bf16Kernel k) {
    INFO("kernel " << int(k));
    for (int rows : {1, 4, N + 1})
      chunked_vs_unchunked<float>(N, C, V, rows, true, true, Precision::BF16, 2e-5, rng);
  });
}

TEST_CASE("LM head chunks: at most about 64 Mi logits or 256 rows, at most all rows, equal", "[kernels]") {
  CHECK(lm_head_chunk_rows(1024, 50304) == 1024);  // small: one chunk
  CHECK(lm_head_chunk_rows(8192, 50304) == 1171);  // 1334 at most: 7 chunks of 1171 (the last 1166)
  CHECK(lm_head_chunk_rows(2048, 256) == 2048);
  CHECK(lm_head_chunk_rows(100000, 1024) == 50000);   // 65536 at most: 2 chunks
  CHECK(lm_head_chunk_rows(100000, 1 << 20) == 256);  // 64 by the logits: the 256-row floor
  CHECK(lm_head_chunk_rows(7, 50304) == 7);
}
