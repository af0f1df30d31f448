#include <catch2/catch.hpp>
#include <cmath>

#include "kernels/ops/crossentropy.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEMPLATE_TEST_CASE("softmax cross-entropy matches the reference, in place too", "[kernels]", float, double) {
  using T = TestType;
  std::mt19937 rng(16);
  for (auto [N, V] : {std::array<int, 2>{7, 13}, {1, 1}, {4, 50}}) {
    INFO("N=" << N << " V=" << V);
    auto logits = random_buf<T>(N * V, rng, -4, 4);
    auto targets = random_ints(N, V, rng);
    Buf<T> probs("probs", N * V), losses("losses", N), probs_r("probs_r", N * V), losses_r("losses_r", N);
    softmax_crossentropy_forward<T>(probs, losses, logits, targets, N, V);
    softmax_crossentropy_forward_reference<T>(probs_r, losses_r, logits, targets, N, V);
    require_close<T>(probs, probs_r, ref_tol<T>(), "probs");
    require_close<T>(losses, losses_r, ref_tol<T>(), "losses");

    // In place: probs over logits gives the same probabilities and losses.
    auto inplace = copy_of<T>(logits);
    Buf<T> losses_ip("losses_ip", N);
    softmax_crossentropy_forward<T>(inplace, losses_ip, inplace, targets, N, V);
    require_close<T>(inplace, probs, ref_tol<T>(), "in-place probs");
    require_close<T>(losses_ip, losses, ref_tol<T>(), "in-place losses");

    // Without targets the losses are left alone.
    auto untouched = random_buf<T>(N, rng);
    auto untouched0 = copy_of<T>(untouched);
    softmax_crossentropy_forward<T>(probs, untouched, logits, Buf<int32_t>("none", 0), N, V);
    require_close<T>(untouched, untouched0, 0, "losses without targets");
    require_close<T>(probs, probs_r, ref_tol<T>(), "probs without targets");

    const T dloss = T(0.37);
    auto dlogits = random_buf<T>(N * V, rng);
    auto dlogits_r = copy_of<T>(dlogits);
    softmax_crossentropy_backward<T>(dlogits, probs, targets, dloss, N, V);
    softmax_crossentropy_backward_reference<T>(dlogits_r, probs, targets, dloss, N, V);
    require_close<T>(dlogits, dlogits_r, ref_tol<T>(), "dlogits");

    // In place over probs ("=" semantics) equals accumulating into zeros.
    Buf<T> dzero("dzero", N * V);
    softmax_crossentropy_backward<T>(dzero, probs, targets, dloss, N, V);
    softmax_crossentropy_backward<T>(inplace, inplace, targets, dloss, N, V);
    require_close<T>(inplace, dzero, ref_tol<T>(), "in-place dlogits");
    auto inplace_r = copy_of<T>(probs);
    softmax_crossentropy_backward_reference<T>(inplace_r, inplace_r, targets, dloss, N, V);
    require_close<T>(inplace_r, dzero, ref_tol<T>(), "in-place reference dlogits");
  }
}

TEST_CASE("softmax cross-entropy is stable for large logits", "[kernels]") {
  const int N = 1, V = 3;
  Buf<float> logits("logits", V), probs("probs", V), losses("losses", N);
  Buf<int32_t> targets("targets", N);
  logits(0) = 1000;
  logits(1) = 1001;
  logits(2) = 800;  // probability underflows to 0 in float
  targets(0) = 2;
  softmax_crossentropy_forward<float>(probs, losses, logits, targets, N, V);
  const double lse = 1001 + std::log(1 + std::exp(-1.0));
  REQUIRE(probs(0) == Approx(std::exp(1000 - lse)).epsilon(1e-6));
  REQUIRE(probs(1) == Approx(std::exp(1001 - lse)).epsilon(1e-6));
  REQUIRE(probs(2) == 0.0f);
  REQUIRE(losses(0) == Approx(lse - 800).epsilon(1e-6));
}

TEST_CASE("softmax cross-entropy backward matches finite differences", "[kernels]") {
  std::mt19937 rng(17);
  const int N = 3, V = 7;
  const double dloss = 0.37;
  auto logits = random_buf<double>(N * V, rng, -3, 3);
  Buf<int32_t> targets("targets", N);
  targets(0) = 0;
  targets(1) = 6;
  targets(2) = 3;
  Buf<double> probs("probs", N * V), losses("losses", N), dlogits("dlogits", N * V);
  auto loss = [&] {
    softmax_crossentropy_forward<double>(probs, losses, logits, targets, N, V);
    double s = 0;
    for (int n = 0; n < N; ++n) s += dloss * losses(n);
    return s;
  };
  loss();
  softmax_crossentropy_backward<double>(dlogits, probs, targets, dloss, N, V);
  check_gradient("logits", logits, dlogits, loss);
  loss();
  check_accumulates({dlogits},
                    [&] { softmax_crossentropy_backward<double>(dlogits, probs, targets, dloss, N, V); });
}
