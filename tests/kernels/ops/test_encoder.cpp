#include <catch2/catch.hpp>

#include "kernels/ops/encoder.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEMPLATE_TEST_CASE("encoder matches the reference", "[kernels][simd]", float, double) {
  using T = TestType;
  std::mt19937 rng(1);
  // {B, Tn, C, V}; C = 70 spans two backward channel chunks.
  for (auto [B, Tn, C, V] : {std::array<int, 4>{2, 5, 13, 11}, {1, 1, 4, 3}, {3, 7, 70, 20}}) {
    const int maxT = Tn + 2;
    auto tokens = random_ints(B * Tn, V, rng);
    auto wte = random_buf<T>(V * C, rng), wpe = random_buf<T>(maxT * C, rng);
    Buf<T> out("out", B * Tn * C), out_ref("out_ref", B * Tn * C);
    encoder_forward<T>(out, tokens, wte, wpe, B, Tn, C);
    encoder_forward_reference<T>(out_ref, tokens, wte, wpe, B, Tn, C);
    require_close<T>(out, out_ref, ref_tol<T>(), "out");

    auto dout = random_buf<T>(B * Tn * C, rng);
    auto dwte = random_buf<T>(V * C, rng), dwpe = random_buf<T>(maxT * C, rng);
    auto dwte_ref = copy_of<T>(dwte), dwpe_ref = copy_of<T>(dwpe);
    encoder_backward<T>(dwte, dwpe, dout, tokens, B, Tn, C);
    encoder_backward_reference<T>(dwte_ref, dwpe_ref, dout, tokens, B, Tn, C);
    require_close<T>(dwte, dwte_ref, ref_tol<T>(), "dwte");
    require_close<T>(dwpe, dwpe_ref, ref_tol<T>(), "dwpe");
  }
}

TEST_CASE("encoder backward matches finite differences", "[kernels]") {
  std::mt19937 rng(2);
  const int B = 2, Tn = 3, C = 5, V = 4, maxT = 4;
  // Repeated tokens make several rows scatter into the same dwte row.
  Buf<int32_t> tokens("tokens", B * Tn);
  const int32_t toks[] = {1, 3, 1, 0, 1, 3};
  for (int i = 0; i < B * Tn; ++i) tokens(i) = toks[i];
  auto wte = random_buf<double>(V * C, rng), wpe = random_buf<double>(maxT * C, rng);
  auto R = random_buf<double>(B * Tn * C, rng);
  Buf<double> out("out", B * Tn * C), dwte("dwte", V * C), dwpe("dwpe", maxT * C);
  auto loss = [&] {
    encoder_forward<double>(out, tokens, wte, wpe, B, Tn, C);
    return dot(out, R);
  };
  encoder_backward<double>(dwte, dwpe, R, tokens, B, Tn, C);
  check_gradient("wte", wte, dwte, loss);
  check_gradient("wpe", wpe, dwpe, loss);
  check_accumulates({dwte, dwpe}, [&] { encoder_backward<double>(dwte, dwpe, R, tokens, B, Tn, C); });
}

TEST_CASE("encoder without a position table is the token embedding alone", "[kernels]") {
  std::mt19937 rng(5);
  const int B = 2, Tn = 3, C = 70, V = 5;
  auto wte = random_buf<double>(V * C, rng);
  auto tok = random_ints(B * Tn, V, rng);
  Buf<double> out("out", B * Tn * C), dwte("dwte", V * C);
  encoder_forward<double>(out, tok, wte, CVec<double>(), B, Tn, C);
  for (int bt = 0; bt < B * Tn; ++bt)
    for (int c = 0; c < C; ++c) REQUIRE(out(bt * C + c) == wte(tok(bt) * C + c));
  auto dout = random_buf<double>(B * Tn * C, rng);
  encoder_backward<double>(dwte, Vec<double>(), dout, tok, B, Tn, C);
  Buf<double> dwte_r("dwte_r", V * C);
  encoder_backward_reference<double>(dwte_r, Vec<double>(), dout, tok, B, Tn, C);
  require_close<double>(dwte, dwte_r, 1e-14, "dwte");
}
