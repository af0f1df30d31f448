#include <catch2/catch.hpp>

#include "kernels/gemm/gemm_batched.hpp"
#include "kernels/ops/attention.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

namespace {
// Zeroes the entries above the diagonal of [rows, Tn] score matrices (row r is
// query position r % Tn): attention leaves them unspecified in preatt and datt,
// and those beyond the row's block (causal_softmax.hpp) in att and dpreatt; the
// zeros it writes inside the block show in out and dqkv.
template <class T>
void clear_masked(Vec<T> s, int64_t rows, int Tn) {
  for (int64_t r = 0; r < rows; ++r)
    for (int t2 = int(r % Tn) + 1; t2 < Tn; ++t2) s(r * Tn + t2) = T(0);
}
}  // namespace

// Tn above 64 runs several blocks of query rows (attention.cpp), the last one
// partial; each case runs on both kernels of the batched GEMM.
TEMPLATE_TEST_CASE("attention matches the reference", "[kernels]", float, double) {
  using T = TestType;
  std::mt19937 rng(7);
  for (BatchedKernel kernel : {BatchedKernel::Blas, BatchedKernel::OneDnn})
    for (auto [B, Tn, C, NH] : {std::array<int, 4>{2, 5, 15, 3},
                                {1, 1, 3, 3},
                                {2, 9, 8, 1},
                                {1, 6, 12, 4},
                                {1, 150, 8, 2},
                                {2, 65, 6, 3}}) {
      const ScopedBatchedKernel force(kernel);
      INFO("B=" << B << " Tn=" << Tn << " C=" << C << " NH=" << NH << " kernel "
                << gemm_batched_backend_name());
      const int64_t nqkv = int64_t(B) * Tn * 3 * C, natt = int64_t(B) * NH * Tn * Tn,
                    nout = int64_t(B) * Tn * C;
      auto qkv = random_buf<T>(nqkv, rng, -2, 2);
      // Garbage in the outputs: forward must overwrite every entry of out and att,
      // masked ones included, and preatt's visible ones.
      auto out = random_buf<T>(nout, rng, 50, 60), pre = random_buf<T>(natt, rng, 50, 60),
           att = random_buf<T>(natt, rng, 50, 60);
      Buf<T> out_r("out_r", nout), pre_r("pre_r", natt), att_r("att_r", natt);
      attention_forward<T>(out, pre, att, qkv, B, Tn, C, NH);
      attention_forward_reference<T>(out_r, pre_r, att_r, qkv, B, Tn, C, NH);
      require_close<T>(out, out_r, ref_tol<T>(), "out");
      const int64_t rows = int64_t(B) * NH * Tn;
      clear_masked<T>(pre, rows, Tn);
      clear_masked<T>(pre_r, rows, Tn);
      require_close<T>(pre, pre_r, ref_tol<T>(), "preatt");
      clear_masked<T>(att, rows, Tn);
      require_close<T>(att, att_r, ref_tol<T>(), "att");

      auto dout = random_buf<T>(nout, rng);
      auto dqkv = random_buf<T>(nqkv, rng);
      auto dqkv_r = copy_of<T>(dqkv);
      // Garbage in the scratch buffers: backward must overwrite them.
      auto dpre = random_buf<T>(natt, rng, 50, 60), datt = random_buf<T>(natt, rng, 50, 60);
      Buf<T> dpre_r("dpre_r", natt), datt_r("datt_r", natt);
      attention_backward<T>(dqkv, dpre, datt, dout, qkv, att, B, Tn, C, NH);
      attention_backward_reference<T>(dqkv_r, dpre_r, datt_r, dout, qkv, att, B, Tn, C, NH);
      require_close<T>(dqkv, dqkv_r, ref_tol<T>(), "dqkv");
      clear_masked<T>(dpre, rows, Tn);
      require_close<T>(dpre, dpre_r, ref_tol<T>(), "dpreatt");
      clear_masked<T>(datt, rows, Tn);
      clear_masked<T>(datt_r, rows, Tn);
      require_close<T>(datt, datt_r, ref_tol<T>(), "datt");
    }
}

TEST_CASE("attention is causal", "[kernels]") {
  std::mt19937 rng(8);
  const int B = 2, Tn = 6, C = 12, NH = 3;
  const int64_t natt = int64_t(B) * NH * Tn * Tn, nout = int64_t(B) * Tn * C;
  auto qkv = random_buf<double>(int64_t(B) * Tn * 3 * C, rng);
  auto out = random_buf<double>(nout, rng), pre = random_buf<double>(natt, rng),
       att = random_buf<double>(natt, rng, 1, 2);
  attention_forward<double>(out, pre, att, qkv, B, Tn, C, NH);
  for (int64_t row = 0; row < int64_t(B) * NH * Tn; ++row)
    for (int t2 = int(row % Tn) + 1; t2 < Tn; ++t2) REQUIRE(att(row * Tn + t2) == 0.0);

  // Change the keys and values of token tf of batch element 0.
  const int tf = 3;
  auto base = copy_of<double>(out);
  for (int c = C; c < 3 * C; ++c) qkv(int64_t(tf) * 3 * C + c) += 0.5;
  attention_forward<double>(out, pre, att, qkv, B, Tn, C, NH);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < Tn; ++t) {
      double change = 0;
      for (int c = 0; c < C; ++c)
        change = std::max(change, std::fabs(out((b * Tn + t) * C + c) - base((b * Tn + t) * C + c)));
      INFO("b=" << b << " t=" << t);
      if (b == 0 && t >= tf)
        REQUIRE(change > 1e-3);
      else
        REQUIRE(change == 0.0);
    }
}

TEST_CASE("attention backward matches finite differences", "[kernels]") {
  std::mt19937 rng(9);
  // One block of query rows, and two (67 = 64 + 3).
  const auto shape = GENERATE(std::array<int, 4>{2, 5, 6, 3}, std::array<int, 4>{1, 67, 4, 2});
  const int B = shape[0], Tn = shape[1], C = shape[2], NH = shape[3];
  const int64_t natt = int64_t(B) * NH * Tn * Tn, nout = int64_t(B) * Tn * C, nqkv = 3 * nout;
  auto qkv = random_buf<double>(nqkv, rng, -2, 2), R = random_buf<double>(nout, rng);
  Buf<double> out("out", nout), pre("pre", natt), att("att", natt);
  Buf<double> dqkv("dqkv", nqkv), dpre("dpre", natt), datt("datt", natt);
  auto loss = [&] {
    attention_forward<double>(out, pre, att, qkv, B, Tn, C, NH);
    return dot(out, R);
  };
  loss();
  attention_backward<double>(dqkv, dpre, datt, R, qkv, att, B, Tn, C, NH);
  check_gradient("qkv", qkv, dqkv, loss);
  loss();
  check_accumulates({dqkv}, [&] { attention_backward<double>(dqkv, dpre, datt, R, qkv, att, B, Tn, C, NH); });
}
