#include <catch2/catch.hpp>

#include "kernels/ops/matmul.hpp"
#include "src/base/bf16.hpp"
#include "tests/kernels/bf16_kernels.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEMPLATE_TEST_CASE("matmul matches the reference in both weight layouts", "[kernels]", float, double) {
  using T = TestType;
  std::mt19937 rng(5);
  // OC = 70 spans two dbias chunks.
  for (auto [N, C, OC] : {std::array<int, 3>{7, 13, 5}, {1, 1, 1}, {9, 16, 70}})
    for (Trans layout : {Trans::N, Trans::T})
      for (bool with_bias : {true, false}) {
        INFO("N=" << N << " C=" << C << " OC=" << OC << " layout " << int(layout) << " bias " << with_bias);
        auto inp = random_buf<T>(N * C, rng), w = random_buf<T>(C * OC, rng);
        auto bias = with_bias ? random_buf<T>(OC, rng) : Buf<T>("nobias", 0);
        // Garbage in out: forward must overwrite it.
        auto out = random_buf<T>(N * OC, rng, 50, 60);
        Buf<T> out_r("out_r", N * OC);
        matmul_forward<T>(out, inp, w, bias, N, C, OC, layout);
        matmul_forward_reference<T>(out_r, inp, w, bias, N, C, OC, layout);
        require_close<T>(out, out_r, ref_tol<T>(), "out");

        auto dout = random_buf<T>(N * OC, rng);
        auto dinp = random_buf<T>(N * C, rng), dw = random_buf<T>(C * OC, rng);
        auto db = with_bias ? random_buf<T>(OC, rng) : Buf<T>("nobias", 0);
        auto dinp_r = copy_of<T>(dinp), dw_r = copy_of<T>(dw), db_r = copy_of<T>(db);
        matmul_backward<T>(dinp, dw, db, dout, inp, w, N, C, OC, layout);
        matmul_backward_reference<T>(dinp_r, dw_r, db_r, dout, inp, w, N, C, OC, layout);
        require_close<T>(dinp, dinp_r, ref_tol<T>(), "dinp");
        require_close<T>(dw, dw_r, ref_tol<T>(), "dweight");
        require_close<T>(db, db_r, ref_tol<T>(), "dbias");
      }
}

TEST_CASE("matmul backward matches finite differences", "[kernels]") {
  std::mt19937 rng(6);
  const int N = 4, C = 5, OC = 3;
  for (Trans layout : {Trans::N, Trans::T}) {
    INFO("layout " << int(layout));
    auto inp = random_buf<double>(N * C, rng), w = random_buf<double>(C * OC, rng),
         bias = random_buf<double>(OC, rng), R = random_buf<double>(N * OC, rng);
    Buf<double> out("out", N * OC), dinp("dinp", N * C), dw("dw", C * OC), db("db", OC);
    auto loss = [&] {
      matmul_forward<double>(out, inp, w, bias, N, C, OC, layout);
      return dot(out, R);
    };
    matmul_backward<double>(dinp, dw, db, R, inp, w, N, C, OC, layout);
    check_gradient("inp", inp, dinp, loss);
    check_gradient("weight", w, dw, loss);
    check_gradient("bias", bias, db, loss);
    check_accumulates({dinp, dw, db},
                      [&] { matmul_backward<double>(dinp, dw, db, R, inp, w, N, C, OC, layout); });
  }
}

TEMPLATE_TEST_CASE("matmul backward overwrites dinp in GradMode::Overwrite", "[kernels]", float, double) {
  using T = TestType;
  std::mt19937 rng(7);
  for (Trans layout : {Trans::N, Trans::T}) {
    const int N = 6, C = 9, OC = 5;
    auto inp = random_buf<T>(N * C, rng), w = random_buf<T>(C * OC, rng), dout = random_buf<T>(N * OC, rng);
    auto dinp = random_buf<T>(N * C, rng, 50, 60), dw = random_buf<T>(C * OC, rng);  // garbage in dinp
    auto dinp_r = random_buf<T>(N * C, rng, -60, -50), dw_r = copy_of<T>(dw);
    matmul_backward<T>(dinp, dw, Vec<T>(), dout, inp, w, N, C, OC, layout, Precision::FP32,
                       GradMode::Overwrite);
    matmul_backward_reference<T>(dinp_r, dw_r, Vec<T>(), dout, inp, w, N, C, OC, layout, GradMode::Overwrite);
    require_close<T>(dinp, dinp_r, ref_tol<T>(), "dinp");
    require_close<T>(dw, dw_r, ref_tol<T>(), "dweight (still accumulated)");
    Buf<T> dinp0("dinp0", N * C), dw0("dw0", C * OC);  // accumulating into zeros gives the same dinp
    matmul_backward_reference<T>(dinp0, dw0, Vec<T>(), dout, inp, w, N, C, OC, layout);
    require_close<T>(dinp, dinp0, ref_tol<T>(), "dinp vs accumulated into zeros");
  }
}

TEST_CASE("matmul backward in bf16 equals the reference on bf16-rounded operands", "[kernels][bf16]") {
  std::mt19937 rng(8);
  const int N = 7, C = 12, OC = 20;
  for_each_bf16_kernel([&](Bf16Kernel k) {
    for (Trans layout : {Trans::N, Trans::T}) {
      INFO("kernel " << int(k) << " layout " << int(layout));
      auto inp = random_buf<float>(N * C, rng), w = random_buf<float>(C * OC, rng);
      auto dout = random_buf<float>(N * OC, rng);
      auto dinp = random_buf<float>(N * C, rng), dw = random_buf<float>(C * OC, rng),
           db = random_buf<float>(OC, rng);
      auto dinp_r = copy_of<float>(dinp), dw_r = copy_of<float>(dw), db_r = copy_of<float>(db);
      matmul_backward<float>(dinp, dw, db, dout, inp, w, N, C, OC, layout, Precision::BF16);
      // The reference on rounded copies; the bias gradient sums the unrounded dout.
      auto inp16 = copy_of<float>(inp), w16 = copy_of<float>(w), dout16 = copy_of<float>(dout);
      for (auto* b : {&inp16, &w16, &dout16}) round_to_bf16(b->data(), int64_t(b->size()));
      Buf<float> nobias("nobias", 0);
      matmul_backward_reference<float>(dinp_r, dw_r, nobias, dout16, inp16, w16, N, C, OC, layout);
      for (int j = 0; j < OC; ++j)
        for (int n = 0; n < N; ++n) db_r(j) += dout(n * OC + j);
      require_close<float>(dinp, dinp_r, 2e-5, "dinp");
      require_close<float>(dw, dw_r, 2e-5, "dweight");
      require_close<float>(db, db_r, 2e-5, "dbias");
    }
  });
}

// The bias rows are the GEMM's C (beta = 1), so the bias joins the product in
// the GEMM's own accumulation: (b + p1) + p2 + ... over OpenBLAS's K panels,
// where adding it after the GEMM gives (p1 + p2 + ...) + b. One panel: the same
// single rounding, bit for bit; several: within one rounding per panel.
TEMPLATE_TEST_CASE("matmul's bias in the GEMM's C equals the GEMM then a bias add", "[kernels]", float,
                   double) {
  using T = TestType;
  std::mt19937 rng(7);
  const int N = 64, OC = 96;
  for (int C : {16, 256, 1536}) {
    INFO("C=" << C);
    auto inp = random_buf<T>(int64_t(N) * C, rng), w = random_buf<T>(int64_t(C) * OC, rng);
    auto bias = random_buf<T>(OC, rng);
    Buf<T> out("out", int64_t(N) * OC), sum("sum", int64_t(N) * OC);
    matmul_forward<T>(out, inp, w, bias, N, C, OC);
    matmul_forward<T>(sum, inp, w, Buf<T>("nobias", 0), N, C, OC);
    for (int64_t i = 0; i < int64_t(N) * OC; ++i) sum(i) += bias(i % OC);
    if (C == 16) require_same_bits<T>(out, sum, "one K panel");
    const double eps = std::numeric_limits<T>::epsilon(), panels = C / 64 + 2;  // a panel is >= 64 deep
    for (int64_t n = 0; n < N; ++n)
      for (int j = 0; j < OC; ++j) {
        double mag = std::fabs(double(bias(j)));
        for (int c = 0; c < C; ++c) mag += std::fabs(double(inp(n * C + c)) * double(w(int64_t(c) * OC + j)));
        const double d = std::fabs(double(out(n * OC + j)) - double(sum(n * OC + j)));
        if (!(d <= panels * eps * mag)) {
          INFO("out[" << n << "," << j << "] " << out(n * OC + j) << " vs " << sum(n * OC + j));
          REQUIRE(d <= panels * eps * mag);
        }
      }
  }
}
