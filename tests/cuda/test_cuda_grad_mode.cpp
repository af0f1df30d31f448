// GradMode::Overwrite of the CUDA twins of the backward kernels the models
// call in that mode (attention, bias + GELU, SwiGLU, RoPE), as
// tests/kernels/runtime/test_grad_mode.cpp checks the host kernels: over a device
// buffer of NaNs each must leave the bits that Accumulate leaves in a zeroed
// one. Without a device every case says "SKIPPED:".
#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "kernels/cuda/ops.hpp"
#include "tests/cuda/device_compare.hpp"

namespace zc = zeropp::cuda;
using zeropp::GradMode;
using namespace zeropp::test;

namespace {

// backward(grad, mode) on the device: Overwrite into NaNs against Accumulate into zeros.
template <class F>
void require_overwrite_is_accumulate_into_zeros(size_t n, const char* what, F&& backward) {
  DeviceCopy<float> over(nan_filled(n)), acc(std::vector<float>(n, 0.0f));
  backward(over.get(), GradMode::Overwrite);
  backward(acc.get(), GradMode::Accumulate);
  REQUIRE_AGREES(what, over.host(), acc.host(), kBitExact);
}

}  // namespace

TEST_CASE("CUDA attention backward overwrites dqkv in GradMode::Overwrite", "[cuda-kernels]") {
  if (!device_or_skip()) return;
  std::mt19937 rng(21);
  const int B = 3, Tn = 37, C = 40, NH = 4;
  const size_t nqkv = size_t(B) * Tn * 3 * C, natt = size_t(B) * NH * Tn * Tn;
  DeviceCopy<float> qkv(random_floats(nqkv, rng, -2, 2)), dout(random_floats(nqkv / 3, rng));
  DeviceCopy<float> out(nan_filled(nqkv / 3)), pre(nan_filled(natt)), att(nan_filled(natt)),
      dpre(nan_filled(natt)), datt(nan_filled(natt));
  zc::Blas blas;
  zc::attention_forward(blas, out.get(), pre.get(), att.get(), qkv.get(), B, Tn, C, NH);
  // The same cuBLAS GEMMs with beta 0 or 1: each sum is formed the same way, then stored or added to 0.
  require_overwrite_is_accumulate_into_zeros(nqkv, "dqkv", [&](float* dqkv, GradMode m) {
    zc::attention_backward(blas, dqkv, dpre.get(), datt.get(), dout.get(), qkv.get(), att.get(), B, Tn, C, NH,
                           m);
  });
}

TEST_CASE("CUDA bias + GELU, SwiGLU and RoPE backward overwrite in GradMode::Overwrite", "[cuda-kernels]") {
  if (!device_or_skip()) return;
  std::mt19937 rng(22);
  {
    const int N = 111, OC = 160;
    const size_t n = size_t(N) * OC;
    const auto dbias0 = random_floats(OC, rng);
    DeviceCopy<float> pre(random_floats(n, rng, -5, 5)), dout(random_floats(n, rng)), dbias_o(dbias0),
        dbias_a(dbias0);
    require_overwrite_is_accumulate_into_zeros(n, "bias_gelu dpre", [&](float* dpre, GradMode m) {
      zc::bias_gelu_backward(dpre, m == GradMode::Overwrite ? dbias_o.get() : dbias_a.get(), pre.get(),
                             dout.get(), N, OC, m);
    });
    REQUIRE_AGREES("bias_gelu dbias (accumulated in both modes)", dbias_o.host(), dbias_a.host(), kBitExact);
  }
  {
    const int64_t N = 37;
    const int F = 1023;
    DeviceCopy<float> inp(random_floats(size_t(N) * 2 * F, rng, -5, 5)),
        dy(random_floats(size_t(N) * F, rng));
    require_overwrite_is_accumulate_into_zeros(
        size_t(N) * 2 * F, "swiglu dinp",
        [&](float* dinp, GradMode m) { zc::swiglu_backward(dinp, inp.get(), dy.get(), N, F, m); });
  }
  {
    const int B = 3, Tn = 37, C = 40, NH = 4;
    const size_t n = size_t(B) * Tn * 3 * C;
    DeviceCopy<float> dy(random_floats(n, rng));
    require_overwrite_is_accumulate_into_zeros(
        n, "rope dinp", [&](float* dinp, GradMode m) { zc::rope_backward(dinp, dy.get(), B, Tn, C, NH, m); });
  }
}
