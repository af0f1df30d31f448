#include <catch2/catch.hpp>

#include "kernels/matmul.hpp"
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
