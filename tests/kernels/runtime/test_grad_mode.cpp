// GradMode::Overwrite of the backward kernels whose input gradient the models
// overwrite (attention, bias + GELU, SwiGLU, RoPE): run over a buffer of NaNs,
// so that any element read or left unwritten shows, each must leave the bits
// that Accumulate leaves in a zeroed buffer; the fast kernels and their
// reference twins alike.
#include <catch2/catch.hpp>

#include "kernels/gemm/gemm_batched.hpp"
#include "kernels/ops/attention.hpp"
#include "kernels/ops/bias_gelu.hpp"
#include "kernels/ops/rope.hpp"
#include "kernels/ops/swiglu.hpp"
#include "tests/kernels/gradcheck.hpp"

using namespace zeropp;
using namespace zeropp::test;

namespace {

// backward(grad, mode) with Overwrite into NaNs against Accumulate into zeros.
template <class T, class F>
void require_overwrite_is_accumulate_into_zeros(int64_t n, const std::string& what, F&& backward) {
  Buf<T> over = nan_buf<T>(n), acc("acc", n);  // acc zero-initialised
  backward(Vec<T>(over), GradMode::Overwrite);
  backward(Vec<T>(acc), GradMode::Accumulate);
  require_same_bits<T>(over, acc, what);
}

}  // namespace

// Tn 150 and 65 run several blocks of query rows (attention.cpp), the last
// one partial; both kernels of the batched GEMM.
TEMPLATE_TEST_CASE("attention backward overwrites dqkv in GradMode::Overwrite", "[kernels]", float, double) {
  using T = TestType;
  std::mt19937 rng(17);
  for (BatchedKernel kernel : {BatchedKernel::Blas, BatchedKernel::OneDnn})
    for (auto [B, Tn, C, NH] : {std::array<int, 4>{2, 5, 15, 3}, {1, 150, 8, 2}, {2, 65, 6, 3}}) {
      const ScopedBatchedKernel force(kernel);
      INFO("B=" << B << " Tn=" << Tn << " C=" << C << " NH=" << NH << " kernel "
                << gemm_batched_backend_name());
      const int64_t nqkv = int64_t(B) * Tn * 3 * C, natt = int64_t(B) * NH * Tn * Tn,
                    nout = int64_t(B) * Tn * C;
      auto qkv = random_buf<T>(nqkv, rng, -2, 2), dout = random_buf<T>(nout, rng);
      Buf<T> out("out", nout), pre("pre", natt), att("att", natt), dpre("dpre", natt), datt("datt", natt);
      attention_forward<T>(out, pre, att, qkv, B, Tn, C, NH);
      require_overwrite_is_accumulate_into_zeros<T>(nqkv, "dqkv", [&](Vec<T> dqkv, GradMode m) {
        attention_backward<T>(dqkv, dpre, datt, dout, qkv, att, B, Tn, C, NH, m);
      });
      require_overwrite_is_accumulate_into_zeros<T>(nqkv, "reference dqkv", [&](Vec<T> dqkv, GradMode m) {
        attention_backward_reference<T>(dqkv, dpre, datt, dout, qkv, att, B, Tn, C, NH, m);
      });
    }
}

// [simd]: also on the AVX2 and baseline paths (ctest kernels_simd_*). dbias
// accumulates in both modes and must not change either.
TEMPLATE_TEST_CASE("bias + GELU backward overwrites dpre in GradMode::Overwrite", "[kernels][simd]", float,
                   double) {
  std::mt19937 rng(18);
  using T = TestType;
  for (auto [N, OC] : {std::pair{7, 13}, std::pair{1, 1}, std::pair{5, 130}}) {  // 130: three column chunks
    const int64_t n = int64_t(N) * OC;
    INFO("N=" << N << " OC=" << OC);
    auto pre = random_buf<T>(n, rng, -4, 4), dout = random_buf<T>(n, rng), dbias0 = random_buf<T>(OC, rng);
    for (bool reference : {false, true}) {
      INFO((reference ? "reference" : "fast kernel"));
      auto backward = [&](Vec<T> dpre, Vec<T> dbias, GradMode m) {
        if (reference)
          bias_gelu_backward_reference<T>(dpre, dbias, pre, dout, N, OC, m);
        else
          bias_gelu_backward<T>(dpre, dbias, pre, dout, N, OC, m);
      };
      Buf<T> dpre_o = nan_buf<T>(n), dpre_a("dpre_a", n);
      auto dbias_o = copy_of<T>(dbias0), dbias_a = copy_of<T>(dbias0);
      backward(dpre_o, dbias_o, GradMode::Overwrite);
      backward(dpre_a, dbias_a, GradMode::Accumulate);
      require_same_bits<T>(dpre_o, dpre_a, "dpre");
      require_same_bits<T>(dbias_o, dbias_a, "dbias");
    }
  }
}

TEMPLATE_TEST_CASE("swiglu backward overwrites dinp in GradMode::Overwrite", "[kernels]", float, double) {
  using T = TestType;
  std::mt19937 rng(19);
  for (auto [N, F] : {std::pair{1, 1}, std::pair{7, 100}}) {
    INFO("N=" << N << " F=" << F);
    auto inp = random_buf<T>(int64_t(N) * 2 * F, rng, -5, 5), dout = random_buf<T>(int64_t(N) * F, rng);
    require_overwrite_is_accumulate_into_zeros<T>(int64_t(N) * 2 * F, "dinp", [&](Vec<T> dinp, GradMode m) {
      swiglu_backward<T>(dinp, inp, dout, N, F, m);
    });
    require_overwrite_is_accumulate_into_zeros<T>(
        int64_t(N) * 2 * F, "reference dinp",
        [&](Vec<T> dinp, GradMode m) { swiglu_backward_reference<T>(dinp, inp, dout, N, F, m); });
  }
}

TEMPLATE_TEST_CASE("rope backward overwrites dinp in GradMode::Overwrite", "[kernels]", float, double) {
  using T = TestType;
  std::mt19937 rng(20);
  for (auto [B, Tn, C, NH] : {std::array{1, 1, 2, 1}, std::array{2, 33, 24, 3}}) {
    INFO("B=" << B << " Tn=" << Tn << " C=" << C << " NH=" << NH);
    const int64_t n = int64_t(B) * Tn * 3 * C;
    auto dout = random_buf<T>(n, rng);
    require_overwrite_is_accumulate_into_zeros<T>(
        n, "dinp", [&](Vec<T> dinp, GradMode m) { rope_backward<T>(dinp, dout, B, Tn, C, NH, m); });
    require_overwrite_is_accumulate_into_zeros<T>(n, "reference dinp", [&](Vec<T> dinp, GradMode m) {
      rope_backward_reference<T>(dinp, dout, B, Tn, C, NH, m);
    });
  }
}
