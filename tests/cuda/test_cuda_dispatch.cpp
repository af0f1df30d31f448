// The device side of the kernel entry points (kernels/runtime/device_context.hpp): the
// twins composed from other twins (the chunked LM head, the bf16 GEMM on fp32
// operands) against their host kernels, and the host entry points themselves
// under an installed context, which must run exactly their CUDA twins on the
// device pointers they are given. Without a device every case says "SKIPPED:"
// (ctest entry cuda_kernels, tag [cuda-kernels], like
// tests/cuda/test_cuda_kernels.cpp).
#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "kernels/cuda/ops.hpp"
#include "kernels/gemm/gemm.hpp"
#include "kernels/gemm/gemm_bf16.hpp"
#include "kernels/ops/layernorm.hpp"
#include "kernels/ops/lm_head_loss.hpp"
#include "kernels/ops/matmul.hpp"
#include "kernels/runtime/device_context.hpp"
#include "tests/cuda/device_compare.hpp"

namespace zc = zeropp::cuda;
using zeropp::CVec;
using zeropp::GradMode;
using zeropp::Precision;
using zeropp::Trans;
using zeropp::Vec;
using namespace zeropp::test;

namespace {

// Views of device memory, for the host entry points under a context.
template <class T>
Vec<T> dview(const DeviceCopy<T>& d, size_t n) {
  return Vec<T>(d.get(), n);
}
template <class T>
CVec<T> dcview(const DeviceCopy<T>& d, size_t n) {
  return CVec<T>(d.get(), n);
}

struct HeadShape {
  const char* name;
  int N, C, V, rows;
};
// Three chunks, the last shorter, on an odd vocabulary; GPT-2's vocabulary in
// chunks of lm_head_chunk_rows.
const HeadShape kHeadShapes[] = {
    {"chunks", 300, 64, 1001, 128},
    {"gpt2 vocabulary", 512, 128, 50304, int(zeropp::lm_head_chunk_rows(512, 50304))}};

}  // namespace

TEST_CASE("CUDA chunked LM head loss against the host's", "[cuda-kernels]") {
  if (!device_or_skip()) return;
  for (const HeadShape& s : kHeadShapes)
    for (const Precision prec : {Precision::FP32, Precision::BF16})
      for (const bool weighted : {true, false}) {
        INFO(s.name << ", " << zeropp::deck_name(prec) << (weighted ? ", weighted rows" : ""));
        std::mt19937 rng(21);
        const int N = s.N, C = s.C, V = s.V;
        const auto x = random_floats(size_t(N) * C, rng), W = random_floats(size_t(V) * C, rng);
        const auto targets = random_tokens(N, V, rng);
        const auto weights = weighted ? random_floats(N, rng, 0, 2) : std::vector<float>{};
        const auto dW0 = random_floats(W.size(), rng);  // overwritten by the first chunk
        std::vector<float> dx(x.size()), dW = dW0, losses(N), scratch(size_t(s.rows) * V);
        zeropp::lm_head_loss<float>(view(dx), view(dW), view(losses), view(scratch), cview(x), cview(W),
                                    cview(targets), cview(weights), N, C, V, s.rows, prec);
        DeviceCopy<float> d_x(x), d_W(W), d_w(weights), d_dx(nan_filled(dx.size())), d_dW(dW0),
            d_losses(nan_filled(N)), d_scratch(nan_filled(scratch.size()));
        DeviceCopy<int32_t> d_t(targets);
        zc::Blas blas;
        zc::lm_head_loss(blas, d_dx.get(), d_dW.get(), d_losses.get(), d_scratch.get(), d_x.get(), d_W.get(),
                         d_t.get(), weighted ? d_w.get() : nullptr, N, C, V, s.rows, prec);
        // The logits within the GEMM's per-term tolerance (kernels/cuda/matmul.cu) over C terms,
        // which the losses and, through softmax (sum of probabilities 1, |W|, |x| <= 1), dx and dW
        // inherit. In bf16 a chunk's g may round to the neighbouring bf16 value on one side only
        // (2^-8 relative), which a weight-2 target row carries into dx and dW.
        const double logit = (prec == Precision::FP32 ? 1e-6 : 4e-6) * C;
        const Tolerance loss_tol{1e-5, 2 * logit},
            grad_tol{1e-4, prec == Precision::FP32 ? 1e-4 + 4 * logit : 1e-2};
        REQUIRE_AGREES("losses", d_losses.host(), losses, loss_tol);
        REQUIRE_AGREES("dx", d_dx.host(), dx, grad_tol);
        REQUIRE_AGREES("dW", d_dW.host(), dW, grad_tol);
        // Validation: the losses alone, nothing else written.
        DeviceCopy<float> d_losses2(nan_filled(N));
        zc::lm_head_loss(blas, nullptr, nullptr, d_losses2.get(), d_scratch.get(), d_x.get(), d_W.get(),
                         d_t.get(), nullptr, N, C, V, s.rows, prec);
        REQUIRE_AGREES("losses only", d_losses2.host(), losses, loss_tol);
      }
}

TEST_CASE("CUDA bf16 GEMM on fp32 operands against the host's", "[cuda-kernels]") {
  if (!device_or_skip()) return;
  std::mt19937 rng(22);
  const int M = 70, N = 130, K = 300, ld_pad = 3;  // leading dimensions wider than the rows
  for (const Trans ta : {Trans::N, Trans::T})
    for (const Trans tb : {Trans::N, Trans::T}) {
      INFO("ta " << (ta == Trans::N ? "N" : "T") << ", tb " << (tb == Trans::N ? "N" : "T"));
      const int lda = (ta == Trans::N ? K : M) + ld_pad, ldb = (tb == Trans::N ? N : K) + ld_pad;
      const auto A = random_floats(size_t(ta == Trans::N ? M : K) * lda, rng);
      const auto B = random_floats(size_t(tb == Trans::N ? K : N) * ldb, rng);
      const auto C0 = random_floats(size_t(M) * N, rng);
      std::vector<float> C = C0;
      zeropp::gemm_bf16_reference(ta, tb, M, N, K, 0.5f, A.data(), lda, B.data(), ldb, 2.0f, C.data(), N);
      DeviceCopy<float> d_A(A), d_B(B), d_C(C0);
      zc::Blas blas;
      zc::gemm_bf16(blas, ta, tb, M, N, K, 0.5f, d_A.get(), lda, d_B.get(), ldb, 2.0f, d_C.get(), N);
      REQUIRE_AGREES("C", d_C.host(), C, (Tolerance{1e-4, 4e-6 * K}));  // kernels/cuda/matmul.cu's
    }
}

TEST_CASE("host entry points under a device context run their CUDA twins", "[cuda-kernels]") {
  if (!device_or_skip()) return;
  std::mt19937 rng(23);
  const int N = 257, C = 96, OC = 288;
  const auto inp = random_floats(size_t(N) * C, rng, -3, 5), w = random_floats(C, rng),
             b = random_floats(C, rng);
  const auto W = random_floats(size_t(C) * OC, rng), dout = random_floats(size_t(N) * OC, rng);
  const auto dinp0 = random_floats(inp.size(), rng), dW0 = random_floats(W.size(), rng);
  zc::Blas blas;
  zeropp::DeviceContext ctx;
  ctx.stream = blas.stream();
  ctx.blas = &blas;
  DeviceCopy<float> d_inp(inp), d_w(w), d_b(b), d_W(W), d_dout(dout);

  // The twin called directly, then the host entry point on the same device pointers: the same bits.
  DeviceCopy<float> t_out(nan_filled(inp.size())), t_mean(nan_filled(N)), t_rstd(nan_filled(N));
  zc::layernorm_forward(t_out.get(), t_mean.get(), t_rstd.get(), d_inp.get(), d_w.get(), d_b.get(), N, C,
                        ctx.stream);
  DeviceCopy<float> h_out(nan_filled(inp.size())), h_mean(nan_filled(N)), h_rstd(nan_filled(N));
  DeviceCopy<float> t_dinp(dinp0), t_dW(dW0), h_dinp(dinp0), h_dW(dW0);
  zc::matmul_backward(blas, t_dinp.get(), t_dW.get(), nullptr, d_dout.get(), d_inp.get(), d_W.get(), N, C, OC,
                      Trans::N, Precision::BF16, GradMode::Overwrite);
  // The GEMM entry points: inp [N,C] · W [C,OC], and the same as a batch of two halves of the rows.
  DeviceCopy<float> t_mm(dout), h_mm(dout), t_bmm(dout), h_bmm(dout);
  const int half = N / 2;
  const int64_t in_stride = int64_t(half) * C, out_stride = int64_t(half) * OC;
  zc::gemm<float>(blas, Trans::N, Trans::N, N, OC, C, 0.5f, d_inp.get(), C, d_W.get(), OC, 1.0f, t_mm.get(),
                  OC);
  zc::gemm_strided_batched<float>(blas, Trans::N, Trans::N, half, OC, C, 1.0f, d_inp.get(), C, in_stride,
                                  d_W.get(), OC, 0, 0.0f, t_bmm.get(), OC, out_stride, 2);
  {
    const zeropp::ScopedDeviceContext installed(&ctx);
    zeropp::layernorm_forward<float>(dview(h_out, inp.size()), dview(h_mean, N), dview(h_rstd, N),
                                     dcview(d_inp, inp.size()), dcview(d_w, C), dcview(d_b, C), N, C);
    zeropp::matmul_backward<float>(dview(h_dinp, inp.size()), dview(h_dW, W.size()), Vec<float>(),
                                   dcview(d_dout, dout.size()), dcview(d_inp, inp.size()),
                                   dcview(d_W, W.size()), N, C, OC, Trans::N, Precision::BF16,
                                   GradMode::Overwrite);
    zeropp::gemm<float>(Trans::N, Trans::N, N, OC, C, 0.5f, d_inp.get(), C, d_W.get(), OC, 1.0f, h_mm.get(),
                        OC);
    zeropp::gemm_strided_batched<float>(Trans::N, Trans::N, half, OC, C, 1.0f, d_inp.get(), C, in_stride,
                                        d_W.get(), OC, 0, 0.0f, h_bmm.get(), OC, out_stride, 2);
    // A double call has no twin: refused, nothing run on the device pointers.
    REQUIRE_THROWS_WITH(
        zeropp::layernorm_forward<double>(Vec<double>(), Vec<double>(), Vec<double>(), CVec<double>(),
                                          CVec<double>(), CVec<double>(), 0, 0),
        Catch::Contains("layernorm_forward (double)"));
  }
  REQUIRE_AGREES("layernorm out", h_out.host(), t_out.host(), kBitExact);
  REQUIRE_AGREES("layernorm mean", h_mean.host(), t_mean.host(), kBitExact);
  REQUIRE_AGREES("layernorm rstd", h_rstd.host(), t_rstd.host(), kBitExact);
  REQUIRE_AGREES("matmul dinp", h_dinp.host(), t_dinp.host(), kBitExact);
  REQUIRE_AGREES("matmul dweight", h_dW.host(), t_dW.host(), kBitExact);
  REQUIRE_AGREES("gemm", h_mm.host(), t_mm.host(), kBitExact);
  REQUIRE_AGREES("gemm_strided_batched", h_bmm.host(), t_bmm.host(), kBitExact);
  // And the host kernel on host copies agrees with both within the twin's tolerance
  // (not the host code run on device pointers, which would crash or differ).
  std::vector<float> out(inp.size()), mean(N), rstd(N);
  zeropp::layernorm_forward<float>(view(out), view(mean), view(rstd), cview(inp), cview(w), cview(b), N, C);
  REQUIRE_AGREES("host layernorm", h_out.host(), out, (Tolerance{1e-5, 1e-5}));
}
