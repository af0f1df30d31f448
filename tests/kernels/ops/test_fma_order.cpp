// The kernels whose CUDA twins are compared bit for bit (tests/cuda) round
// every operation as written, on whichever SIMD path this process runs
// (kernels/runtime/simd_dispatch.hpp; the ctest entries kernels_simd_avx2 and
// kernels_simd_baseline run the others): GCC would contract a*b+c into an FMA
// on the AVX2 and AVX-512 paths, the device (--fmad=false) does not. The
// references below are the written expressions; this file is compiled with
// -ffp-contract=off (tests/CMakeLists.txt), so they are never contracted.
#include <catch2/catch.hpp>

#include "kernels/ops/accumulate.hpp"
#include "kernels/ops/crossentropy.hpp"
#include "kernels/ops/layernorm.hpp"
#include "kernels/quant/error_feedback.hpp"
#include "kernels/runtime/cpu_features.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEST_CASE("kernels with bit-exact device twins round as written on this SIMD path", "[kernels][simd]") {
  INFO("path " << simd_isa_name(simd_isa()));
  std::mt19937 rng(11);
  const int N = 67, C = 203;  // rows and columns past any vector width
  const int64_t NC = int64_t(N) * C;

  // Cross-entropy backward: dlogits += dloss * probs, then -= dloss at the target.
  const auto probs = random_buf<float>(NC, rng, 0, 1), dl0 = random_buf<float>(NC, rng);
  const auto tgt = random_ints(N, C, rng);
  const float dloss = 0.37f;
  auto dl = copy_of<float>(dl0), want = copy_of<float>(dl0);
  softmax_crossentropy_backward<float>(dl, probs, tgt, dloss, N, C);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) want(n * C + c) += dloss * probs(n * C + c);
    want(n * C + tgt(n)) -= dloss;
  }
  require_same_bits<float>(dl, want, "dlogits");

  // LayerNorm's parameter gradients: dw += dy * ((x - mean) * rstd), db += dy, row after row.
  const auto x = random_buf<float>(NC, rng, -3, 5), w = random_buf<float>(C, rng),
             dy = random_buf<float>(NC, rng);
  const auto mean = random_buf<float>(N, rng), rstd = random_buf<float>(N, rng, 0.5, 2);
  const auto dw0 = random_buf<float>(C, rng), db0 = random_buf<float>(C, rng);
  Buf<float> dinp("dinp", NC);
  auto dw = copy_of<float>(dw0), db = copy_of<float>(db0), want_dw = copy_of<float>(dw0),
       want_db = copy_of<float>(db0);
  layernorm_backward<float>(dinp, dw, db, dy, x, w, mean, rstd, N, C);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      want_dw(c) += dy(n * C + c) * ((x(n * C + c) - mean(n)) * rstd(n));
      want_db(c) += dy(n * C + c);
    }
  require_same_bits<float>(dw, want_dw, "layernorm dweight");
  require_same_bits<float>(db, want_db, "layernorm dbias");

  // The engine's y += x * a and qgZ's error feedback e = beta * e + (1 - beta) * (x - deq).
  const auto y0 = random_buf<float>(NC, rng), deq = random_buf<float>(NC, rng),
             e0 = random_buf<float>(NC, rng);
  auto y = copy_of<float>(y0), want_y = copy_of<float>(y0), e = copy_of<float>(e0),
       want_e = copy_of<float>(e0);
  const float a = 0.61f, beta = 0.9f;
  accumulate_scaled(y, x, a, NC);
  update_error(e, x, deq, beta, NC);
  for (int64_t i = 0; i < NC; ++i) {
    want_y(i) += x(i) * a;
    want_e(i) = beta * e0(i) + (1.0f - beta) * (x(i) - deq(i));
  }
  require_same_bits<float>(y, want_y, "accumulate_scaled");
  require_same_bits<float>(e, want_e, "update_error");
}
