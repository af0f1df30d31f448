// Every model kernel of kernels/cuda against its host twin (kernels/<op>.hpp,
// the Kokkos kernel the model runs on the CPU), on the device, on random
// inputs of inputs/small.toml's shapes (V 50304, T 256, C 384, 6 heads) and of
// an odd shape that leaves partial warps and blocks. Bit for bit where the
// operation allows it (elementwise arithmetic, sums taken in the host's
// order), else within the tolerance kernels/cuda/<op>.cu states. Without a
// device every case says "SKIPPED:" (ctest entry cuda_kernels reports a skip).
#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "kernels/cuda/ops.hpp"
#include "kernels/ops/accumulate.hpp"
#include "kernels/ops/adamw.hpp"
#include "kernels/ops/attention.hpp"
#include "kernels/ops/attention_decode.hpp"
#include "kernels/ops/bias_gelu.hpp"
#include "kernels/ops/causal_softmax.hpp"
#include "kernels/ops/convert.hpp"
#include "kernels/ops/crossentropy.hpp"
#include "kernels/ops/encoder.hpp"
#include "kernels/ops/gelu.hpp"
#include "kernels/ops/layernorm.hpp"
#include "kernels/ops/layernorm_seed.hpp"
#include "kernels/ops/matmul.hpp"
#include "kernels/ops/residual.hpp"
#include "kernels/ops/rmsnorm.hpp"
#include "kernels/ops/rope.hpp"
#include "kernels/ops/sum_squares.hpp"
#include "kernels/ops/swiglu.hpp"
#include "kernels/quant/error_feedback.hpp"
#include "src/base/bf16.hpp"
#include "tests/cuda/device_compare.hpp"

namespace zc = zeropp::cuda;
using zeropp::CVec;
using zeropp::Vec;
using namespace zeropp::test;

namespace {

struct Shape {
  const char* name;
  int B, Tn, C, NH, V;
};
// inputs/small.toml's model, and one whose rows are not multiples of a warp.
const Shape kShapes[] = {{"small", 4, 256, 384, 6, 50304}, {"odd", 3, 37, 40, 4, 1001}};

// f(shape, generator) for each shape, the generator seeded afresh; nothing
// (a skip) without a device.
template <class F>
void for_each_shape(unsigned seed, F f) {
  if (!device_or_skip()) return;
  for (const Shape& s : kShapes) {
    INFO(s.name);
    std::mt19937 rng(seed);
    f(s, rng);
  }
}

constexpr Tolerance kExpf{1e-5, 4e-6};     // expf/tanh against glibc's: an ulp or two
constexpr Tolerance kRowSums{1e-5, 1e-5};  // warp-ordered row sums against sequential ones
// Two-level column sums of `rows` terms about 1 in size against the host's row order (column_sum.cuh).
constexpr Tolerance kColumnSums(int rows) { return Tolerance{1e-5, 1e-6 * rows}; }

}  // namespace

TEST_CASE("CUDA encoder against the host's", "[cuda-kernels]") {
  for_each_shape(1, [](const Shape& s, std::mt19937& rng) {
    const int64_t BT = int64_t(s.B) * s.Tn;
    // Without positions, three token ids only: long runs of rows onto one dwte row.
    const auto many = random_tokens(BT, s.V, rng), few = random_tokens(BT, 3, rng);
    const auto wte = random_floats(size_t(s.V) * s.C, rng), wpe = random_floats(size_t(s.Tn) * s.C, rng);
    const auto dout = random_floats(BT * s.C, rng);
    const auto dwte0 = random_floats(wte.size(), rng), dwpe0 = random_floats(wpe.size(), rng);
    for (const bool positions : {true, false}) {
      const auto& tokens = positions ? many : few;
      std::vector<float> out(BT * s.C), dwte = dwte0, dwpe = positions ? dwpe0 : std::vector<float>{};
      const std::vector<float> no_wpe;
      zeropp::encoder_forward<float>(view(out), cview(tokens), cview(wte), cview(positions ? wpe : no_wpe),
                                     s.B, s.Tn, s.C);
      zeropp::encoder_backward<float>(view(dwte), view(dwpe), cview(dout), cview(tokens), s.B, s.Tn, s.C);
      DeviceCopy<int32_t> d_tok(tokens);
      DeviceCopy<float> d_wte(wte), d_wpe(wpe), d_out(nan_filled(out.size())), d_dout(dout);
      DeviceCopy<float> d_dwte(dwte0), d_dwpe(dwpe0);
      zc::encoder_forward(d_out.get(), d_tok.get(), d_wte.get(), positions ? d_wpe.get() : nullptr, s.B, s.Tn,
                          s.C);
      zc::encoder_backward(d_dwte.get(), positions ? d_dwpe.get() : nullptr, d_dout.get(), d_tok.get(), s.B,
                           s.Tn, s.C);
      REQUIRE_AGREES("out", d_out.host(), out, kBitExact);
      REQUIRE_AGREES("dwte", d_dwte.host(), dwte, kBitExact);
      if (positions) REQUIRE_AGREES("dwpe", d_dwpe.host(), dwpe, kBitExact);
    }
  });
}

TEST_CASE("CUDA LayerNorm against the host's", "[cuda-kernels]") {
  for_each_shape(2, [](const Shape& s, std::mt19937& rng) {
    const int N = s.B * s.Tn, C = s.C;
    const auto inp = random_floats(size_t(N) * C, rng, -3, 5), w = random_floats(C, rng),
               b = random_floats(C, rng);
    const auto dout = random_floats(inp.size(), rng), dinp0 = random_floats(inp.size(), rng);
    const auto dw0 = random_floats(C, rng), db0 = random_floats(C, rng);
    std::vector<float> out(inp.size()), mean(N), rstd(N), dinp = dinp0, dw = dw0, db = db0;
    zeropp::layernorm_forward<float>(view(out), view(mean), view(rstd), cview(inp), cview(w), cview(b), N, C);
    DeviceCopy<float> d_inp(inp), d_w(w), d_b(b), d_out(nan_filled(out.size())),
        d_mean(nan_filled(mean.size())), d_rstd(nan_filled(rstd.size()));
    zc::layernorm_forward(d_out.get(), d_mean.get(), d_rstd.get(), d_inp.get(), d_w.get(), d_b.get(), N, C);
    REQUIRE_AGREES("out", d_out.host(), out, kRowSums);
    REQUIRE_AGREES("mean", d_mean.host(), mean, kRowSums);
    REQUIRE_AGREES("rstd", d_rstd.host(), rstd, kRowSums);
    // The backward from the host's saved statistics on both sides.
    zeropp::layernorm_backward<float>(view(dinp), view(dw), view(db), cview(dout), cview(inp), cview(w),
                                      cview(mean), cview(rstd), N, C);
    DeviceCopy<float> d_dout(dout), d_dinp(dinp0), d_dw(dw0), d_db(db0), h_mean(mean), h_rstd(rstd);
    zc::layernorm_backward(d_dinp.get(), d_dw.get(), d_db.get(), d_dout.get(), d_inp.get(), d_w.get(),
                           h_mean.get(), h_rstd.get(), N, C);
    REQUIRE_AGREES("dinp", d_dinp.host(), dinp, kRowSums);
    REQUIRE_AGREES("dweight", d_dw.host(), dw, kColumnSums(N));
    REQUIRE_AGREES("dbias", d_db.host(), db, kColumnSums(N));
    // The column sums' order is fixed by N and C: a second run gives the same bits.
    DeviceCopy<float> d_dinp2(dinp0), d_dw2(dw0), d_db2(db0);
    zc::layernorm_backward(d_dinp2.get(), d_dw2.get(), d_db2.get(), d_dout.get(), d_inp.get(), d_w.get(),
                           h_mean.get(), h_rstd.get(), N, C);
    REQUIRE_AGREES("dweight, again", d_dw2.host(), d_dw.host(), kBitExact);
    REQUIRE_AGREES("dbias, again", d_db2.host(), d_db.host(), kBitExact);
  });
}

TEST_CASE("CUDA attention against the host's", "[cuda-kernels]") {
  for_each_shape(3, [](const Shape& s, std::mt19937& rng) {
    const int64_t BT = int64_t(s.B) * s.Tn, att_n = int64_t(s.B) * s.NH * s.Tn * s.Tn;
    const auto qkv = random_floats(BT * 3 * s.C, rng), dout = random_floats(BT * s.C, rng);
    const auto dqkv0 = random_floats(qkv.size(), rng);
    std::vector<float> out(BT * s.C), preatt(att_n), att(att_n), dpreatt(att_n), datt(att_n), dqkv = dqkv0;
    zeropp::attention_forward<float>(view(out), view(preatt), view(att), cview(qkv), s.B, s.Tn, s.C, s.NH);
    zeropp::attention_backward<float>(view(dqkv), view(dpreatt), view(datt), cview(dout), cview(qkv),
                                      cview(att), s.B, s.Tn, s.C, s.NH);
    zc::Blas blas;
    DeviceCopy<float> d_qkv(qkv), d_out(nan_filled(out.size())), d_preatt(nan_filled(preatt.size())),
        d_att(nan_filled(att.size())), d_dout(dout), d_dqkv(dqkv0);
    DeviceCopy<float> d_dpreatt(nan_filled(dpreatt.size())), d_datt(nan_filled(datt.size()));
    zc::attention_forward(blas, d_out.get(), d_preatt.get(), d_att.get(), d_qkv.get(), s.B, s.Tn, s.C, s.NH);
    // cuBLAS and OpenBLAS sum the GEMMs in different orders (see attention.cu).
    const Tolerance tol{1e-4, 1e-5};
    REQUIRE_AGREES("preatt", d_preatt.host(), preatt, tol);
    REQUIRE_AGREES("att", d_att.host(), att, tol);
    REQUIRE_AGREES("out", d_out.host(), out, tol);
    // The backward from the host's att, so that only the backward is compared.
    DeviceCopy<float> h_att(att);
    zc::attention_backward(blas, d_dqkv.get(), d_dpreatt.get(), d_datt.get(), d_dout.get(), d_qkv.get(),
                           h_att.get(), s.B, s.Tn, s.C, s.NH);
    REQUIRE_AGREES("datt", d_datt.host(), datt, tol);
    REQUIRE_AGREES("dpreatt", d_dpreatt.host(), dpreatt, tol);
    REQUIRE_AGREES("dqkv", d_dqkv.host(), dqkv, tol);
  });
}

TEST_CASE("CUDA GELU and residual and SwiGLU against the host's", "[cuda-kernels]") {
  if (!device_or_skip()) return;
  std::mt19937 rng(4);
  const int64_t n = int64_t(4) * 256 * 4 * 384 + 5;  // the MLP's [B,T,4C], plus a partial block
  const auto x = random_floats(n, rng, -6, 6), y = random_floats(n, rng), dout = random_floats(n, rng);
  const auto dx0 = random_floats(n, rng), dy0 = random_floats(n, rng);
  {
    std::vector<float> out(n), dx = dx0;
    zeropp::gelu_forward<float>(view(out), cview(x), n);
    zeropp::gelu_backward<float>(view(dx), cview(x), cview(dout), n);
    DeviceCopy<float> d_x(x), d_out(nan_filled(out.size())), d_dout(dout), d_dx(dx0);
    zc::gelu_forward(d_out.get(), d_x.get(), n);
    zc::gelu_backward(d_dx.get(), d_x.get(), d_dout.get(), n);
    REQUIRE_AGREES("gelu out", d_out.host(), out, kExpf);
    REQUIRE_AGREES("gelu dinp", d_dx.host(), dx, kExpf);
  }
  {
    std::vector<float> out(n), da = dx0, db = dy0;
    zeropp::residual_forward<float>(view(out), cview(x), cview(y), n);
    zeropp::residual_backward<float>(view(da), view(db), cview(dout), n);
    DeviceCopy<float> d_x(x), d_y(y), d_out(nan_filled(out.size())), d_dout(dout), d_da(dx0), d_db(dy0);
    zc::residual_forward(d_out.get(), d_x.get(), d_y.get(), n);
    zc::residual_backward(d_da.get(), d_db.get(), d_dout.get(), n);
    REQUIRE_AGREES("residual out", d_out.host(), out, kBitExact);
    REQUIRE_AGREES("residual da", d_da.host(), da, kBitExact);
    REQUIRE_AGREES("residual db", d_db.host(), db, kBitExact);
    zc::residual_forward(d_x.get(), d_x.get(), d_y.get(), n);  // out aliasing a
    REQUIRE_AGREES("residual in place", d_x.host(), out, kBitExact);
  }
  {
    const int F = 1023;  // [N, 2F] -> [N, F], F odd
    const int64_t N = (n - 5) / (2 * F);
    std::vector<float> out(N * F), dinp(dx0.begin(), dx0.begin() + N * 2 * F);
    const std::vector<float> inp(x.begin(), x.begin() + N * 2 * F), dy(dout.begin(), dout.begin() + N * F);
    zeropp::swiglu_forward<float>(view(out), cview(inp), N, F);
    DeviceCopy<float> d_inp(inp), d_out(nan_filled(out.size())), d_dy(dy), d_dinp(dinp);
    zeropp::swiglu_backward<float>(view(dinp), cview(inp), cview(dy), N, F);
    zc::swiglu_forward(d_out.get(), d_inp.get(), N, F);
    zc::swiglu_backward(d_dinp.get(), d_inp.get(), d_dy.get(), N, F);
    REQUIRE_AGREES("swiglu out", d_out.host(), out, kExpf);
    REQUIRE_AGREES("swiglu dinp", d_dinp.host(), dinp, kExpf);
  }
}

TEST_CASE("CUDA softmax cross-entropy against the host's", "[cuda-kernels]") {
  for_each_shape(5, [](const Shape& s, std::mt19937& rng) {
    const int N = 64 + 3, V = s.V;
    const auto logits = random_floats(size_t(N) * V, rng, -8, 8), dl0 = random_floats(size_t(N) * V, rng);
    const auto targets = random_tokens(N, V, rng);
    const float dloss = 1.0f / 67;
    std::vector<float> probs(logits.size()), losses(N), dl = dl0;
    zeropp::softmax_crossentropy_forward<float>(view(probs), view(losses), cview(logits), cview(targets), N,
                                                V);
    zeropp::softmax_crossentropy_backward<float>(view(dl), cview(probs), cview(targets), dloss, N, V);
    DeviceCopy<float> d_logits(logits), d_probs(nan_filled(probs.size())),
        d_losses(nan_filled(losses.size())), d_dl(dl0);
    DeviceCopy<int32_t> d_t(targets);
    zc::softmax_crossentropy_forward(d_probs.get(), d_losses.get(), d_logits.get(), d_t.get(), N, V);
    const Tolerance tol{1e-5, 1e-10};
    REQUIRE_AGREES("probs", d_probs.host(), probs, tol);
    REQUIRE_AGREES("losses", d_losses.host(), losses, tol);
    // In place (probs over logits), as the model calls it.
    zc::softmax_crossentropy_forward(d_logits.get(), d_losses.get(), d_logits.get(), d_t.get(), N, V);
    REQUIRE_AGREES("probs in place", d_logits.host(), probs, tol);
    REQUIRE_AGREES("losses in place", d_losses.host(), losses, tol);
    // The backward from the host's probs: accumulating, then in place (=).
    DeviceCopy<float> h_probs(probs);
    zc::softmax_crossentropy_backward(d_dl.get(), h_probs.get(), d_t.get(), dloss, N, V);
    REQUIRE_AGREES("dlogits", d_dl.host(), dl, kBitExact);
    std::vector<float> in_place = probs;
    zeropp::softmax_crossentropy_backward<float>(view(in_place), cview(in_place), cview(targets), dloss, N,
                                                 V);
    zc::softmax_crossentropy_backward(h_probs.get(), h_probs.get(), d_t.get(), dloss, N, V);
    REQUIRE_AGREES("dlogits in place", h_probs.host(), in_place, kBitExact);
  });
}

TEST_CASE("CUDA AdamW and sum of squares against the host's", "[cuda-kernels]") {
  if (!device_or_skip()) return;
  std::mt19937 rng(6);
  const int64_t n = 3 * 384 * 384 + 17;
  auto p = random_floats(n, rng), m = random_floats(n, rng, -0.01f, 0.01f),
       v = random_floats(n, rng, 0, 1e-4f);
  const auto g = random_floats(n, rng);
  DeviceCopy<float> d_p(p), d_m(m), d_v(v), d_g(g);
  for (int step = 1; step <= 3; ++step) {  // the bias corrections change with the step
    zeropp::adamw_update<float>(view(p), view(m), view(v), cview(g), n, 6e-4f, 0.9f, 0.95f, 1e-8f, 0.1f, step,
                                0.5f);
    zc::adamw_update(d_p.get(), d_m.get(), d_v.get(), d_g.get(), n, 6e-4f, 0.9f, 0.95f, 1e-8f, 0.1f, step,
                     0.5f);
  }
  REQUIRE_AGREES("param", d_p.host(), p, kBitExact);
  REQUIRE_AGREES("m", d_m.host(), m, kBitExact);
  REQUIRE_AGREES("v", d_v.host(), v, kBitExact);

  const double host = zeropp::sum_squares<float>(cview(g), n);
  const double dev = zc::sum_squares(d_g.get(), n);
  INFO("sum of squares: device " << dev << ", host " << host);
  REQUIRE(std::fabs(dev - host) <= 1e-11 * host);
  REQUIRE(zc::sum_squares(d_g.get(), 0) == 0.0);
  REQUIRE(zc::sum_squares(d_g.get(), 1) == double(g[0]) * double(g[0]));
}

TEST_CASE("CUDA RMSNorm and RoPE against the host's", "[cuda-kernels]") {
  for_each_shape(7, [](const Shape& s, std::mt19937& rng) {
    const int N = s.B * s.Tn, C = s.C;
    const auto inp = random_floats(size_t(N) * C, rng, -3, 3), w = random_floats(C, rng);
    const auto dout = random_floats(inp.size(), rng), dinp0 = random_floats(inp.size(), rng);
    const auto dw0 = random_floats(C, rng);
    std::vector<float> out(inp.size()), rstd(N), dinp = dinp0, dw = dw0;
    zeropp::rmsnorm_forward<float>(view(out), view(rstd), cview(inp), cview(w), N, C);
    zeropp::rmsnorm_backward<float>(view(dinp), view(dw), cview(dout), cview(inp), cview(w), cview(rstd), N,
                                    C);
    DeviceCopy<float> d_inp(inp), d_w(w), d_out(nan_filled(out.size())), d_rstd(nan_filled(rstd.size())),
        d_dout(dout), d_dinp(dinp0), d_dw(dw0);
    DeviceCopy<float> h_rstd(rstd);
    zc::rmsnorm_forward(d_out.get(), d_rstd.get(), d_inp.get(), d_w.get(), N, C);
    zc::rmsnorm_backward(d_dinp.get(), d_dw.get(), d_dout.get(), d_inp.get(), d_w.get(), h_rstd.get(), N, C);
    REQUIRE_AGREES("rmsnorm out", d_out.host(), out, kRowSums);
    REQUIRE_AGREES("rmsnorm rstd", d_rstd.host(), rstd, kRowSums);
    REQUIRE_AGREES("rmsnorm dinp", d_dinp.host(), dinp, kRowSums);
    REQUIRE_AGREES("rmsnorm dweight", d_dw.host(), dw, kColumnSums(N));

    // RoPE on [B, Tn, 3C]: theta reaches Tn radians (rope.cu's tolerance).
    const auto qkv = random_floats(size_t(N) * 3 * C, rng), dqkv_out = random_floats(qkv.size(), rng);
    const auto dqkv0 = random_floats(qkv.size(), rng);
    std::vector<float> rot(qkv.size()), dqkv = dqkv0;
    zeropp::rope_forward<float>(view(rot), cview(qkv), s.B, s.Tn, C, s.NH);
    zeropp::rope_backward<float>(view(dqkv), cview(dqkv_out), s.B, s.Tn, C, s.NH);
    DeviceCopy<float> d_qkv(qkv), d_rot(nan_filled(rot.size())), d_dy(dqkv_out), d_dqkv(dqkv0);
    zc::rope_forward(d_rot.get(), d_qkv.get(), s.B, s.Tn, C, s.NH);
    zc::rope_backward(d_dqkv.get(), d_dy.get(), s.B, s.Tn, C, s.NH);
    const Tolerance rope_tol{1e-5, 1e-6 * s.Tn + 1e-6};
    REQUIRE_AGREES("rope out", d_rot.host(), rot, rope_tol);
    REQUIRE_AGREES("rope dinp", d_dqkv.host(), dqkv, rope_tol);
  });
}

TEST_CASE("CUDA causal softmax against the host's", "[cuda-kernels]") {
  for_each_shape(8, [](const Shape& s, std::mt19937& rng) {
    const int64_t rows = int64_t(s.B) * s.NH * s.Tn, n = rows * s.Tn;
    const auto pre = random_floats(n, rng, -4, 4), datt = random_floats(n, rng);
    const float scale = 0.125f;
    std::vector<float> att(n), dpre(n);
    zeropp::causal_softmax_forward<float>(view(att), cview(pre), rows, s.Tn);
    zeropp::causal_softmax_backward<float>(view(dpre), cview(att), cview(datt), rows, s.Tn, scale);
    DeviceCopy<float> d_pre(pre), d_att(nan_filled(n)), d_datt(datt), d_dpre(nan_filled(n)), h_att(att);
    zc::causal_softmax_forward(d_att.get(), d_pre.get(), rows, s.Tn);
    REQUIRE_AGREES("att", d_att.host(), att, (Tolerance{1e-5, 1e-7}));
    // The backward from the host's att, so that only the backward is compared.
    zc::causal_softmax_backward(d_dpre.get(), h_att.get(), d_datt.get(), rows, s.Tn, scale);
    REQUIRE_AGREES("dpre", d_dpre.host(), dpre, (Tolerance{1e-5, 1e-6}));
    // In place, as attention_decode uses it.
    zc::causal_softmax_forward(d_pre.get(), d_pre.get(), rows, s.Tn);
    REQUIRE_AGREES("att in place", d_pre.host(), att, (Tolerance{1e-5, 1e-7}));
  });
}

TEST_CASE("CUDA bias + GELU backward against the host's", "[cuda-kernels]") {
  for_each_shape(9, [](const Shape& s, std::mt19937& rng) {
    const int N = s.B * s.Tn, OC = 4 * s.C;  // the MLP's fc output
    const size_t n = size_t(N) * OC;
    const auto pre = random_floats(n, rng, -5, 5), dout = random_floats(n, rng);
    const auto dpre0 = random_floats(n, rng), dbias0 = random_floats(OC, rng);
    std::vector<float> dpre = dpre0, dbias = dbias0;
    zeropp::bias_gelu_backward<float>(view(dpre), view(dbias), cview(pre), cview(dout), N, OC);
    DeviceCopy<float> d_dout(dout), d_dpre(dpre0), d_dbias(dbias0), h_pre(pre);
    zc::bias_gelu_backward(d_dpre.get(), d_dbias.get(), h_pre.get(), d_dout.get(), N, OC);
    REQUIRE_AGREES("dpre", d_dpre.host(), dpre, kExpf);
    REQUIRE_AGREES("dbias", d_dbias.host(), dbias, (Tolerance{1e-5, 1e-4}));  // N terms (bias_gelu.cu)
  });
}

TEST_CASE("CUDA LayerNorm with the residual seed against the host's", "[cuda-kernels]") {
  for_each_shape(10, [](const Shape& s, std::mt19937& rng) {
    const int N = s.B * s.Tn, C = s.C;
    const size_t n = size_t(N) * C;
    const auto x = random_floats(n, rng, -3, 5), w = random_floats(C, rng), bias = random_floats(C, rng),
               seed_bias = random_floats(C, rng);
    std::vector<float> seed(n), out(n), mean(N), rstd(N);
    zeropp::layernorm_seed_forward<float>(view(out), view(mean), view(rstd), view(seed), cview(x), cview(w),
                                          cview(bias), cview(seed_bias), N, C);
    DeviceCopy<float> d_x(x), d_w(w), d_bias(bias), d_seed_bias(seed_bias), d_seed(nan_filled(n)),
        d_out(nan_filled(n)), d_mean(nan_filled(N)), d_rstd(nan_filled(N));
    zc::layernorm_seed_forward(d_out.get(), d_mean.get(), d_rstd.get(), d_seed.get(), d_x.get(), d_w.get(),
                               d_bias.get(), d_seed_bias.get(), N, C);
    REQUIRE_AGREES("seed", d_seed.host(), seed, kBitExact);
    REQUIRE_AGREES("out", d_out.host(), out, kRowSums);
    REQUIRE_AGREES("mean", d_mean.host(), mean, kRowSums);
    REQUIRE_AGREES("rstd", d_rstd.host(), rstd, kRowSums);
  });
}

TEST_CASE("CUDA KV-cache decode attention and RoPE at an offset against the host's", "[cuda-kernels]") {
  for_each_shape(11, [](const Shape& s, std::mt19937& rng) {
    const int Tmax = s.Tn, C = s.C;
    // A prefill of the first tokens, then one decode step at the last position.
    for (const auto& [pos, Tn] : {std::pair{0, s.Tn / 3}, std::pair{s.Tn - 1, 1}}) {
      INFO("pos " << pos << ", Tn " << Tn);
      const int Tk = pos + Tn;
      const auto qkv = random_floats(size_t(s.B) * Tn * 3 * C, rng);
      const auto kc = random_floats(size_t(s.B) * Tmax * C, rng), vc = random_floats(kc.size(), rng);
      std::vector<float> out(size_t(s.B) * Tn * C), att(size_t(s.B) * s.NH * Tn * Tk);
      zeropp::attention_decode<float>(view(out), view(att), cview(qkv), cview(kc), cview(vc), s.B, Tn, pos,
                                      Tmax, C, s.NH);
      zc::Blas blas;
      DeviceCopy<float> d_qkv(qkv), d_kc(kc), d_vc(vc), d_out(nan_filled(out.size())),
          d_att(nan_filled(att.size()));
      zc::attention_decode(blas, d_out.get(), d_att.get(), d_qkv.get(), d_kc.get(), d_vc.get(), s.B, Tn, pos,
                           Tmax, C, s.NH);
      const Tolerance tol{1e-4, 1e-5};  // attention_decode.cu
      REQUIRE_AGREES("att", d_att.host(), att, tol);
      REQUIRE_AGREES("out", d_out.host(), out, tol);

      std::vector<float> rot(qkv.size());
      zeropp::rope_forward_at<float>(view(rot), cview(qkv), s.B, Tn, C, s.NH, pos);
      DeviceCopy<float> d_rot(nan_filled(rot.size()));
      zc::rope_forward_at(d_rot.get(), d_qkv.get(), s.B, Tn, C, s.NH, pos);
      REQUIRE_AGREES("rope at pos", d_rot.host(), rot, (Tolerance{1e-5, 1e-6 * Tk + 1e-6}));
    }
  });
}

TEST_CASE("CUDA matmul forward and backward against the host's", "[cuda-kernels]") {
  using zeropp::GradMode;
  using zeropp::Precision;
  using zeropp::Trans;
  for_each_shape(12, [](const Shape& s, std::mt19937& rng) {
    const int N = s.B * s.Tn, C = s.C, OC = 3 * s.C;  // the attention's qkv projection
    const auto inp = random_floats(size_t(N) * C, rng), w = random_floats(size_t(C) * OC, rng),
               bias = random_floats(OC, rng), dout = random_floats(size_t(N) * OC, rng);
    const auto dinp0 = random_floats(inp.size(), rng), dw0 = random_floats(w.size(), rng),
               db0 = random_floats(OC, rng);
    zc::Blas blas;
    DeviceCopy<float> d_inp(inp), d_w(w), d_bias(bias), d_dout(dout);
    for (const Precision prec : {Precision::FP32, Precision::BF16})
      for (const Trans layout : {Trans::N, Trans::T})
        for (const bool with_bias : {true, false}) {
          // dinp overwritten along the way (the model's scratch gradients), accumulated otherwise.
          const GradMode mode = with_bias ? GradMode::Accumulate : GradMode::Overwrite;
          INFO(zeropp::deck_name(prec) << ", weight layout " << (layout == Trans::N ? "N" : "T")
                                       << (with_bias ? ", bias, dinp +=" : ", no bias, dinp ="));
          // cuBLAS and OpenBLAS sum in different orders; bf16 tensor cores truncate (matmul.cu).
          const double per_term = prec == Precision::FP32 ? 1e-6 : 4e-6;
          const auto gemm_tol = [&](int terms) { return Tolerance{1e-4, per_term * terms}; };
          const std::vector<float> none;
          std::vector<float> out(size_t(N) * OC), dinp = dinp0, dw = dw0, db = with_bias ? db0 : none;
          zeropp::matmul_forward<float>(view(out), cview(inp), cview(w), cview(with_bias ? bias : none), N, C,
                                        OC, layout, prec);
          zeropp::matmul_backward<float>(view(dinp), view(dw), view(db), cview(dout), cview(inp), cview(w), N,
                                         C, OC, layout, prec, mode);
          DeviceCopy<float> d_out(nan_filled(out.size())), d_dinp(dinp0), d_dw(dw0), d_db(db0);
          zc::matmul_forward(blas, d_out.get(), d_inp.get(), d_w.get(), with_bias ? d_bias.get() : nullptr, N,
                             C, OC, layout, prec);
          zc::matmul_backward(blas, d_dinp.get(), d_dw.get(), with_bias ? d_db.get() : nullptr, d_dout.get(),
                              d_inp.get(), d_w.get(), N, C, OC, layout, prec, mode);
          REQUIRE_AGREES("out", d_out.host(), out, gemm_tol(C));
          REQUIRE_AGREES("dinp", d_dinp.host(), dinp, gemm_tol(OC));
          REQUIRE_AGREES("dweight", d_dw.host(), dw, gemm_tol(N));
          if (with_bias) REQUIRE_AGREES("dbias", d_db.host(), db, kColumnSums(N));
        }
  });
}

namespace {
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// fp32 bit patterns where bf16 rounding has edge cases, then random patterns.
std::vector<float> bf16_edge_values(std::mt19937& rng) {
  const uint32_t edges[] = {
      0x00000000, 0x80000000,                          // +-0
      0x7f800000, 0xff800000,                          // +-inf
      0x7fc00000, 0xffc00000, 0x7f800001, 0xff80ffff,  // quiet and signalling NaNs, both signs
      0x7fffffff, 0x7f808000,                          // NaNs that adding the rounding bias would carry
      0x00000001, 0x80000001, 0x00008000, 0x00018000,  // denormals: smallest, ties to even (down, up)
      0x007fffff, 0x807f8000, 0x007f7fff,              // largest denormal, rounding up into a normal
      0x3f808000, 0x3f818000, 0x3f808001, 0x3f807fff,  // ties to even down and up, just above and below
      0x7f7fffff, 0xff7f8000, 0x7f7f7fff,              // past the largest bf16: inf; largest bf16 kept
  };
  std::vector<float> v;
  for (const uint32_t u : edges) v.push_back(from_bits(u));
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 100000; ++i) v.push_back(from_bits(bits(rng)));
  return v;
}

// bf16 bits as the floats they widen to: equal bits, equal floats, so first_mismatch compares them.
std::vector<float> widened(const std::vector<uint16_t>& h) {
  std::vector<float> f(h.size());
  zeropp::bf16_to_fp32(h.data(), f.data(), int64_t(h.size()));
  return f;
}
}  // namespace

TEST_CASE("CUDA fp32 <-> bf16 conversions bit for bit against the host's", "[cuda-kernels]") {
  if (!device_or_skip()) return;
  std::mt19937 rng(13);
  const auto x = bf16_edge_values(rng);
  const int64_t n = int64_t(x.size());
  std::vector<uint16_t> bits(n);
  zeropp::to_bf16(cview(x), view(bits), n);
  DeviceCopy<float> d_x(x);
  DeviceCopy<uint16_t> d_bits(std::vector<uint16_t>(n, 0xffff));
  zc::to_bf16(d_x.get(), d_bits.get(), n);
  REQUIRE_AGREES("to_bf16", widened(d_bits.host()), widened(bits), kBitExact);

  std::vector<float> rounded = x;
  zeropp::round_to_bf16(view(rounded), n);
  DeviceCopy<float> d_rounded(nan_filled(x.size()));
  zc::round_to_bf16(d_x.get(), d_rounded.get(), n);
  REQUIRE_AGREES("round_to_bf16, copying", d_rounded.host(), rounded, kBitExact);
  zc::round_to_bf16(d_x.get(), d_x.get(), n);
  REQUIRE_AGREES("round_to_bf16, in place", d_x.host(), rounded, kBitExact);

  std::vector<uint16_t> every(1 << 16);  // every bf16 pattern
  for (size_t i = 0; i < every.size(); ++i) every[i] = uint16_t(i);
  std::vector<float> wide(every.size());
  zeropp::from_bf16(cview(every), view(wide), int64_t(every.size()));
  DeviceCopy<uint16_t> d_every(every);
  DeviceCopy<float> d_wide(nan_filled(wide.size()));
  zc::from_bf16(d_every.get(), d_wide.get(), int64_t(every.size()));
  REQUIRE_AGREES("from_bf16", d_wide.host(), wide, kBitExact);
}

TEST_CASE("CUDA accumulate_scaled and error feedback bit for bit against the host's", "[cuda-kernels]") {
  if (!device_or_skip()) return;
  std::mt19937 rng(14);
  const int64_t n = 3 * 384 * 384 + 17;
  auto y = random_floats(n, rng, -10, 10), e = random_floats(n, rng, -0.1f, 0.1f);
  const auto x = random_floats(n, rng, -10, 10), deq = random_floats(n, rng, -10, 10);
  DeviceCopy<float> d_y(y), d_e(e), d_x(x), d_deq(deq);
  const float a = 1.0f / 3, beta = 0.9f;  // not powers of two: a fused multiply-add would round differently
  zeropp::accumulate_scaled(view(y), cview(x), a, n);
  zc::accumulate_scaled(d_y.get(), d_x.get(), a, n);
  REQUIRE_AGREES("accumulate_scaled", d_y.host(), y, kBitExact);

  // One hop: x = g + e, then e from x and its dequantized value.
  zeropp::add_error(view(y), cview(e), n);
  zeropp::update_error(view(e), cview(y), cview(deq), beta, n);
  zc::add_error(d_y.get(), d_e.get(), n);
  zc::update_error(d_e.get(), d_y.get(), d_deq.get(), beta, n);
  REQUIRE_AGREES("add_error", d_y.host(), y, kBitExact);
  REQUIRE_AGREES("update_error", d_e.host(), e, kBitExact);
}

// The comparison the cases above rely on, on the host (ctest entry cuda_compare,
// which runs without a device): it must catch one ulp, a NaN and a size change.
TEST_CASE("first_mismatch: bit for bit, tolerances, NaN", "[cuda-compare]") {
  const std::vector<float> a{1.0f, -2.5f, 0.0f, 3e-8f};
  REQUIRE(first_mismatch(a, a, kBitExact).empty());
  std::vector<float> b = a;
  b[1] = std::nextafter(b[1], 0.0f);
  REQUIRE(first_mismatch(b, a, kBitExact) == "1 of 4 differ; first [1]: device -2.49999976, host -2.5");
  REQUIRE(first_mismatch(b, a, Tolerance{1e-6, 0}).empty());
  REQUIRE(!first_mismatch(b, a, Tolerance{1e-8, 0}).empty());
  b = a;
  b[2] = -0.0f;  // equal as numbers, not as bits
  REQUIRE(!first_mismatch(b, a, kBitExact).empty());
  REQUIRE(first_mismatch(b, a, Tolerance{0, 1e-30}).empty());
  b[3] = 4e-8f;
  REQUIRE(first_mismatch(b, a, Tolerance{0, 2e-8}).empty());
  REQUIRE(!first_mismatch(b, a, Tolerance{0, 5e-9}).empty());
  b = a;
  b[0] = std::nanf("");
  REQUIRE(!first_mismatch(b, a, Tolerance{1, 1}).empty());
  REQUIRE(first_mismatch(nan_filled(3), nan_filled(3), Tolerance{1e-5, 0}).empty());
  REQUIRE(first_mismatch(std::vector<float>(3), a, Tolerance{1, 1}) == "sizes differ");
}
