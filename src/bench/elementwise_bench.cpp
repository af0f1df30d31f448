// zeropp_elementwise_bench [--reps R]
//
// Thread CPU time of the dispatched elementwise kernels (kernels/runtime/simd_dispatch.hpp)
// on the shapes of one `tiny` step (inputs/tiny.toml: B 8, T 256, C 256, 4 heads;
// the cross-entropy on one LM-head chunk of `small`, V 50304):
// best of R calls each, in ms. CPU time rather than wall time, so that other
// processes on the machine change the figures little. The instruction set is
// the one simd_isa() picks; ZEROPP_MAX_CPU_ISA=avx2|baseline runs the others
// (docs/performance.md).
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/ops/adamw.hpp"
#include "kernels/ops/bias_gelu.hpp"
#include "kernels/ops/buffer_ops.hpp"
#include "kernels/ops/causal_softmax.hpp"
#include "kernels/ops/convert.hpp"
#include "kernels/ops/crossentropy.hpp"
#include "kernels/ops/gelu.hpp"
#include "kernels/ops/layernorm.hpp"
#include "kernels/ops/layernorm_seed.hpp"
#include "kernels/ops/sum_squares.hpp"
#include "kernels/runtime/cpu_features.hpp"

using namespace zeropp;

namespace {

double thread_cpu_s() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

template <class F>
void report(const char* name, int reps, const F& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double t0 = thread_cpu_s();
    f();
    best = std::min(best, thread_cpu_s() - t0);
  }
  std::printf("| %s | %.3f |\n", name, best * 1e3);
}

Buf<float> filled(const char* name, int64_t n, float scale) {
  Buf<float> b{std::string(name), size_t(n)};
  for (int64_t i = 0; i < n; ++i) b(i) = scale * (float((i * 7919) % 2001) / 250.0f - 4.0f);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 15;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--reps R]\n", argv[0]);
      return 2;
    }
  }
  if (reps < 1) {
    std::fprintf(stderr, "%s: --reps must be at least 1\n", argv[0]);
    return 2;
  }
  Kokkos::initialize(argc, argv);
  {
    const int N = 8 * 256, C = 256, OC = 4 * C, Tn = 256;
    const int64_t rows = int64_t(8) * 4 * Tn;  // B · heads · T score rows
    auto pre = filled("pre", int64_t(N) * OC, 1), out = filled("out", int64_t(N) * OC, 1);
    auto dpre = filled("dpre", int64_t(N) * OC, 0), dout = filled("dout", int64_t(N) * OC, 1e-3f);
    auto dbias = filled("dbias", OC, 0);
    auto x = filled("x", int64_t(N) * C, 0.5f), y = filled("y", int64_t(N) * C, 0),
         dx = filled("dx", int64_t(N) * C, 0);
    auto w = filled("w", C, 0.25f), b = filled("b", C, 0), dw = filled("dw", C, 0), db = filled("db", C, 0);
    auto mean = filled("mean", N, 0), rstd = filled("rstd", N, 0);
    auto scores = filled("scores", rows * Tn, 0.5f), att = filled("att", rows * Tn, 0);
    auto datt = filled("datt", rows * Tn, 1e-3f);
    Buf<uint16_t> half("half", size_t(N) * OC);
    const int64_t n = int64_t(N) * OC;
    std::printf("elementwise kernels: %s, best of %d, thread CPU ms\n\n| kernel | ms |\n|---|---:|\n",
                simd_isa_name(simd_isa()), reps);
    report("gelu_forward [2048, 1024]", reps, [&] { gelu_forward<float>(out, pre, n); });
    report("bias_gelu_backward [2048, 1024]", reps,
           [&] { bias_gelu_backward<float>(dpre, dbias, pre, dout, N, OC); });
    report("layernorm_forward [2048, 256]", reps,
           [&] { layernorm_forward<float>(y, mean, rstd, x, w, b, N, C); });
    report("layernorm_seed_forward [2048, 256]", reps,
           [&] { layernorm_seed_forward<float>(y, mean, rstd, dx, x, w, b, db, N, C); });
    report("layernorm_backward [2048, 256]", reps,
           [&] { layernorm_backward<float>(dx, dw, db, y, x, w, mean, rstd, N, C); });
    report("causal_softmax_forward [8192, 256]", reps,
           [&] { causal_softmax_forward<float>(att, scores, rows, Tn); });
    report("causal_softmax_backward [8192, 256]", reps,
           [&] { causal_softmax_backward<float>(scores, att, datt, rows, Tn, 0.125f); });
    {  // the LM head's chunk of logits with GPT-2's vocabulary (lm_head_loss.cpp)
      const int rows = 256, V = 50304;
      auto logits = filled("logits", int64_t(rows) * V, 2), losses = filled("losses", rows, 0);
      Buf<int32_t> tgt("tgt", rows);
      for (int r = 0; r < rows; ++r) tgt(r) = (r * 7919) % V;
      report("crossentropy_forward [256, 50304]", reps,
             [&] { softmax_crossentropy_forward<float>(logits, losses, logits, tgt, rows, V); });
      report("crossentropy_backward [256, 50304]", reps,
             [&] { softmax_crossentropy_backward<float>(logits, logits, tgt, 1.0f, rows, V); });
    }
    report("sum_squares [2M]", reps, [&] {
      volatile double s = sum_squares<float>(pre, n);
      (void)s;
    });
    auto m = filled("m", n, 0), v = filled("v", n, 0);
    report("adamw_update [2M]", reps,
           [&] { adamw_update<float>(pre, m, v, dout, n, 1e-4f, 0.9f, 0.95f, 1e-8f, 0.1f, 10, 1.0f); });
    report("fill 0 [2M]", reps, [&] { fill<float>(dpre, 0.0f); });
    report("to_bf16 [2M]", reps, [&] { to_bf16(pre, half, n); });
    report("from_bf16 [2M]", reps, [&] { from_bf16(half, out, n); });
    report("round_to_bf16 [2M]", reps, [&] { round_to_bf16(pre, out, n); });
    report("round_to_bf16 in place [2M]", reps, [&] { round_to_bf16(out, n); });
  }
  Kokkos::finalize();
  return 0;
}
