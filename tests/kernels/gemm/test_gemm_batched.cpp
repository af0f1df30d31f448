// gemm_strided_batched<float> on each kernel of gemm_batched.hpp (the BLAS once
// per product, oneDNN's matmul over the batch) against gemm_reference per
// batch element, on attention's kind of layout: the batch's operands
// interleaved in rows of a wider matrix (stride hs, leading dimension 3C).
//
// Bound per element of C = alpha·op(A)·op(B) + beta·C, with S = sum_k |a_k b_k|:
// both sum fp32 products in fp32, so |err| <= 4·K·2^-24·(|alpha|·S + |beta·C|)
// against the double-accumulated reference (as in test_gemm_bf16.cpp).
#include <omp.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/gemm/gemm.hpp"
#include "kernels/gemm/gemm_batched.hpp"

using namespace zeropp;

namespace {

struct Batched {
  Trans ta, tb;
  int M, N, K, batch, lda, ldb, ldc;
  int64_t sa, sb, sc;
  std::vector<float> A, B, C0;
};

// `batch` products side by side in the columns of each operand (stride = the
// stored matrix's width, padding of 3 columns after the last).
Batched make(Trans ta, Trans tb, int M, int N, int K, int batch, std::mt19937& rng) {
  std::normal_distribution<float> n01(0, 1);
  const int a_rows = ta == Trans::N ? M : K, a_cols = ta == Trans::N ? K : M;
  const int b_rows = tb == Trans::N ? K : N, b_cols = tb == Trans::N ? N : K;
  Batched c{ta,     tb,     M, N,  K,  batch, batch * a_cols + 3, batch * b_cols + 3, batch * N + 3,
            a_cols, b_cols, N, {}, {}, {}};
  c.A.resize(size_t(a_rows) * c.lda);
  c.B.resize(size_t(b_rows) * c.ldb);
  c.C0.resize(size_t(M) * c.ldc);
  for (auto* v : {&c.A, &c.B, &c.C0})
    for (auto& x : *v) x = n01(rng);
  return c;
}

// Runs the batch on the current kernel and checks each element against the reference.
void check(const Batched& c, float alpha, float beta) {
  std::vector<float> C = c.C0, R = c.C0;
  gemm_strided_batched<float>(c.ta, c.tb, c.M, c.N, c.K, alpha, c.A.data(), c.lda, c.sa, c.B.data(), c.ldb,
                              c.sb, beta, C.data(), c.ldc, c.sc, c.batch);
  for (int i = 0; i < c.batch; ++i)
    gemm_reference<float>(c.ta, c.tb, c.M, c.N, c.K, alpha, c.A.data() + i * c.sa, c.lda,
                          c.B.data() + i * c.sb, c.ldb, beta, R.data() + i * c.sc, c.ldc);
  std::vector<float> ones_a = c.A, ones_b = c.B;  // |A|, |B|: S through the reference itself
  for (auto& x : ones_a) x = std::abs(x);
  for (auto& x : ones_b) x = std::abs(x);
  std::vector<float> S(c.C0.size(), 0.0f);
  for (int i = 0; i < c.batch; ++i)
    gemm_reference<float>(c.ta, c.tb, c.M, c.N, c.K, 1.0f, ones_a.data() + i * c.sa, c.lda,
                          ones_b.data() + i * c.sb, c.ldb, 0.0f, S.data() + i * c.sc, c.ldc);
  for (size_t e = 0; e < C.size(); ++e) {
    const double bound =
        4.0 * std::max(c.K, 1) * std::exp2(-24) * (std::abs(alpha) * S[e] + std::abs(beta * c.C0[e])) + 1e-30;
    INFO("element " << e << ": " << C[e] << " vs " << R[e] << ", bound " << bound);
    REQUIRE(std::abs(double(C[e]) - double(R[e])) <= bound);
  }
}

}  // namespace

TEST_CASE("batched GEMM matches the reference on each kernel", "[kernels][batched]") {
  std::mt19937 rng(21);
  for (BatchedKernel k : {BatchedKernel::Blas, BatchedKernel::OneDnn}) {
    const ScopedBatchedKernel force(k);
    INFO(gemm_batched_backend_name());
    for (Trans ta : {Trans::N, Trans::T})
      for (Trans tb : {Trans::N, Trans::T})
        for (auto [alpha, beta] : {std::pair{0.125f, 0.0f}, std::pair{1.0f, 1.0f}, std::pair{0.5f, 2.0f}}) {
          check(make(ta, tb, 37, 29, 64, 4, rng), alpha, beta);
          check(make(ta, tb, 5, 7, 3, 1, rng), alpha, beta);  // a batch of one
        }
    check(make(Trans::N, Trans::N, 6, 5, 0, 3, rng), 1.0f, 0.5f);  // K = 0: C = beta·C
  }
}

TEST_CASE("batched GEMM: oneDNN where it has AVX-512 and one thread, forced by name", "[kernels][batched]") {
  REQUIRE(choose_batched_kernel(true, 1) == BatchedKernel::OneDnn);
  REQUIRE(choose_batched_kernel(false, 1) == BatchedKernel::Blas);
  REQUIRE(choose_batched_kernel(true, 2) == BatchedKernel::Blas);
  REQUIRE(deck_value<BatchedKernel>("auto") == BatchedKernel::Auto);
  REQUIRE(deck_value<BatchedKernel>("blas") == BatchedKernel::Blas);
  REQUIRE(deck_value<BatchedKernel>("onednn") == BatchedKernel::OneDnn);
  REQUIRE(!deck_value<BatchedKernel>("mkl"));
  WARN("batched GEMM here: " << gemm_batched_backend_name());
  REQUIRE(gemm_batched_backend_name().find("(forced)") == std::string::npos);
  {
    const ScopedBatchedKernel force(BatchedKernel::OneDnn);
    REQUIRE(gemm_batched_backend_name().find("oneDNN") == 0);
    REQUIRE(gemm_batched_backend_name().find("(forced)") != std::string::npos);
  }
  const ScopedBatchedKernel force(BatchedKernel::Blas);
  REQUIRE(gemm_batched_backend_name().find("one call per product (forced)") != std::string::npos);
}

TEST_CASE("oneDNN's batched GEMM gives the same results on 1 and 2 threads", "[kernels][batched][threads]") {
  std::mt19937 rng(22);
  const ScopedBatchedKernel force(BatchedKernel::OneDnn);
  // Attention's score product at T = 256, hs = 64, 4 heads.
  const Batched c = make(Trans::N, Trans::T, 256, 256, 64, 4, rng);
  std::vector<float> out[2];
  for (int threads : {1, 2}) {
    set_gemm_threads(threads);
    REQUIRE(omp_get_max_threads() == threads);
    out[threads - 1] = c.C0;
    gemm_strided_batched<float>(c.ta, c.tb, c.M, c.N, c.K, 1.0f, c.A.data(), c.lda, c.sa, c.B.data(), c.ldb,
                                c.sb, 1.0f, out[threads - 1].data(), c.ldc, c.sc, c.batch);
  }
  set_gemm_threads(1);
  size_t differ = 0;
  for (size_t e = 0; e < out[0].size(); ++e) {
    // |a·b| <= 16 per term for most normal pairs; the bound is loose on purpose: a
    // wrong split of the batch across threads moves elements by O(1).
    REQUIRE(std::abs(out[0][e] - out[1][e]) <= 4.0 * 64 * std::exp2(-24) * 64 * 16);
    differ += out[0][e] != out[1][e];
  }
  if (differ > 0) WARN(differ << " elements differ between 1 and 2 threads (within summation error)");
}
