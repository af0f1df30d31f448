// zeropp_gemm_bench DECK [--reps R] [--threads N]
//
// The GEMM libraries' rates on a deck's own GEMM shapes (src/bench/bench.hpp's
// model_gemm_shapes, batch_size·seq_len tokens): fp32 on OpenBLAS and on
// oneDNN's matmul, and the bf16 GEMM with each of its kernels this CPU has
// (the fp32 BLAS on bf16-rounded operands; oneDNN's bf16 matmul). Then the
// attention (forward + backward, softmax included) with each kernel of its
// batched GEMMs (gemm_batched.hpp). Each shape runs once to warm up, then R
// times, the columns interleaved; the best time is kept. With one thread the
// time is the thread's CPU time, which other processes sharing the core barely
// inflate (this project's VMs run several builds at once); with more, wall
// time. Prints one Markdown row per shape and the step's mix (FLOPs over summed
// best times). First the core's peak: twelve independent chains of fp32 FMAs
// and, where the CPU has AVX512-BF16, of bf16 dot products (vdpbf16ps: 32
// multiply-adds each), the ceiling of each kind of kernel without AMX.
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <time.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/gemm/gemm_batched.hpp"
#include "kernels/gemm/gemm_bf16.hpp"
#include "kernels/ops/attention.hpp"
#include "src/bench/bench.hpp"

using namespace zeropp;

namespace {

double seconds(int threads) {
  timespec ts{};
  clock_gettime(threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

#if defined(__x86_64__)      // the peak loops are x86 intrinsics
constexpr int kChains = 12;  // enough independent accumulators to hide the latency

__attribute__((target("avx512f"))) float sum_lanes(const __m512* acc) {
  float lanes[16], sum = 0;
  for (int c = 0; c < kChains; ++c) {
    _mm512_storeu_ps(lanes, acc[c]);
    for (float v : lanes) sum += v;
  }
  return sum;
}

__attribute__((target("avx512f"))) float fma_chains(long n) {
  __m512 acc[kChains];
  for (auto& a : acc) a = _mm512_setzero_ps();
  __m512 x = _mm512_set1_ps(1.0f), y = _mm512_set1_ps(1e-9f);
  for (long i = 0; i < n; ++i) {
    for (auto& a : acc) a = _mm512_fmadd_ps(x, y, a);
    __asm__ volatile("" : "+v"(x), "+v"(y));  // keeps the loop from being folded
  }
  return sum_lanes(acc);
}

__attribute__((target("avx512f,avx512bf16"))) float bf16_dot_chains(long n) {
  __m512 acc[kChains];
  for (auto& a : acc) a = _mm512_setzero_ps();
  __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80), y = x;  // bf16 1.0
  for (long i = 0; i < n; ++i) {
    for (auto& a : acc) a = _mm512_dpbf16_ps(a, x, y);
    __asm__ volatile("" : "+v"(x), "+v"(y));
  }
  return sum_lanes(acc);
}

// GFLOP/s of the best of 50 runs of `chains` (flops_per_op per instruction).
double peak(float (*chains)(long), double flops_per_op) {
  const long n = 100000;
  double best = 1e30;
  volatile float sink = 0;
  for (int r = 0; r < 50; ++r) {
    const double t0 = seconds(1);
    sink = sink + chains(n);
    best = std::min(best, seconds(1) - t0);
  }
  return double(n) * kChains * flops_per_op / best * 1e-9;
}

#endif
// One column: the fp32 GEMM on the BLAS (gemm) or on oneDNN (a batch of one
// through gemm_strided_batched with oneDNN forced), or the bf16 GEMM on a kernel.
struct Column {
  const char* title;
  std::function<void()> force;  // selects the kernel
  bool onednn_fp32;
  Precision prec;
};

void force_none() {
  force_bf16_kernel(std::nullopt);
  force_batched_kernel(BatchedKernel::Auto);
}

// Best times of one shape's product on each column, the columns interleaved
// in each repetition so that a change in the machine's load hits all.
std::vector<double> best_times(const GemmShape& sh, const std::vector<Column>& cols, int reps, int threads) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> A(size_t(sh.M) * sh.K), B(size_t(sh.K) * sh.N), C(size_t(sh.M) * sh.N);
  for (auto* v : {&A, &B})
    for (auto& x : *v) x = u(rng);
  const int lda = sh.ta == Trans::N ? sh.K : sh.M, ldb = sh.tb == Trans::N ? sh.N : sh.K;
  std::vector<double> best(cols.size(), 1e30);
  for (int r = 0; r <= reps; ++r)  // r = 0 warms up
    for (size_t c = 0; c < cols.size(); ++c) {
      cols[c].force();
      const double t0 = seconds(threads);
      if (cols[c].onednn_fp32)
        gemm_strided_batched<float>(sh.ta, sh.tb, sh.M, sh.N, sh.K, 1.0f, A.data(), lda, 0, B.data(), ldb, 0,
                                    1.0f, C.data(), sh.N, 0, 1);
      else
        gemm_as(cols[c].prec, sh.ta, sh.tb, sh.M, sh.N, sh.K, 1.0f, A.data(), lda, B.data(), ldb, 1.0f,
                C.data(), sh.N);
      if (r > 0) best[c] = std::min(best[c], seconds(threads) - t0);
      force_none();
    }
  return best;
}

// Best time of one layer's attention forward + backward (B, T of the deck) on
// each kernel of the batched GEMMs, interleaved.
std::vector<double> attention_times(const Config& cfg, const std::vector<BatchedKernel>& kernels, int reps,
                                    int threads) {
  const int B = cfg.train.batch_size, Tn = cfg.train.seq_len, C = cfg.model.n_embd, NH = cfg.model.n_head;
  const int64_t natt = int64_t(B) * NH * Tn * Tn, nout = int64_t(B) * Tn * C;
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> u(-1, 1);
  Buf<float> qkv("qkv", 3 * nout), dqkv("dqkv", 3 * nout), out("out", nout), dout("dout", nout);
  Buf<float> pre("pre", natt), att("att", natt), dpre("dpre", natt), datt("datt", natt);
  for (int64_t i = 0; i < 3 * nout; ++i) qkv(i) = u(rng);
  for (int64_t i = 0; i < nout; ++i) dout(i) = u(rng);
  std::vector<double> best(kernels.size(), 1e30);
  for (int r = 0; r <= reps; ++r)
    for (size_t k = 0; k < kernels.size(); ++k) {
      force_batched_kernel(kernels[k]);
      const double t0 = seconds(threads);
      attention_forward<float>(out, pre, att, qkv, B, Tn, C, NH);
      attention_backward<float>(dqkv, dpre, datt, dout, qkv, att, B, Tn, C, NH);
      if (r > 0) best[k] = std::min(best[k], seconds(threads) - t0);
      force_none();
    }
  return best;
}

// The model's GEMM shapes, one row each, then the step's mix in every column.
void print_shape_table(const Config& cfg, const std::vector<Column>& cols, int reps, int threads) {
  std::printf("\n\n| op(A)·op(B) | M×N×K | per step |");
  for (const Column& c : cols) std::printf(" %s GFLOP/s |", c.title);
  std::printf("\n|---|---|---:|");
  for (size_t c = 0; c < cols.size(); ++c) std::printf("---:|");
  std::printf("\n");
  double flops = 0;
  std::vector<double> total(cols.size(), 0.0);
  for (const GemmShape& sh : model_gemm_shapes(cfg.model, cfg.train.batch_size * cfg.train.seq_len)) {
    const double f = 2.0 * sh.M * sh.N * sh.K;
    std::printf("| %s·%s | %d×%d×%d | %d |", sh.ta == Trans::N ? "A" : "A^T", sh.tb == Trans::N ? "B" : "B^T",
                sh.M, sh.N, sh.K, sh.per_step);
    const std::vector<double> t = best_times(sh, cols, reps, threads);
    for (size_t c = 0; c < cols.size(); ++c) {
      total[c] += t[c] * sh.per_step;
      std::printf(" %.1f |", f / t[c] * 1e-9);
    }
    std::printf("\n");
    flops += f * sh.per_step;
  }
  std::printf("| **step's mix** | | |");
  for (double t : total) std::printf(" **%.1f** |", flops / t * 1e-9);
}

// The attention's products: 2·2·T·C FLOPs per token forward (full T×T, as the
// step's FLOP count has them) and twice that backward.
void print_attention(const Config& cfg, int reps, int threads) {
  const std::vector<BatchedKernel> kernels{BatchedKernel::Blas, BatchedKernel::OneDnn};
  const std::vector<double> at = attention_times(cfg, kernels, reps, threads);
  const double BT = double(cfg.train.batch_size) * cfg.train.seq_len;
  const double att_flops = 3 * 4.0 * BT * cfg.train.seq_len * cfg.model.n_embd;
  std::printf("\n\nattention forward + backward, one layer (B %d, T %d, C %d, %d heads), softmax included:\n",
              cfg.train.batch_size, cfg.train.seq_len, cfg.model.n_embd, cfg.model.n_head);
  for (size_t k = 0; k < kernels.size(); ++k) {
    force_batched_kernel(kernels[k]);
    std::printf("  %-60s %8.2f ms  (%.1f GFLOP/s of full-T×T products)\n",
                gemm_batched_backend_name().c_str(), at[k] * 1e3, att_flops / at[k] * 1e-9);
  }
  force_none();
}

// The columns this build and CPU offer.
std::vector<Column> columns() {
  std::vector<Column> cols{
      {"fp32 OpenBLAS", [] { force_batched_kernel(BatchedKernel::Blas); }, false, Precision::FP32},
      {"fp32 oneDNN", [] { force_batched_kernel(BatchedKernel::OneDnn); }, true, Precision::FP32},
      {"bf16 BLAS on rounded", [] { force_bf16_kernel(Bf16Kernel::RoundedBlas); }, false, Precision::BF16}};
  try {
    force_bf16_kernel(Bf16Kernel::OneDnn);
    cols.push_back({"bf16 oneDNN", [] { force_bf16_kernel(Bf16Kernel::OneDnn); }, false, Precision::BF16});
  } catch (const std::invalid_argument&) {
  }
  force_none();
  return cols;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DECK [--reps R] [--threads N]\n", argv[0]);
    return 2;
  }
  int reps = 10, threads = 1;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--reps")
      reps = std::atoi(argv[i + 1]);
    else if (a == "--threads")
      threads = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "%s: unknown option %s\n", argv[0], a.c_str());
      return 2;
    }
  }
  if (reps < 1 || threads < 1) {
    std::fprintf(stderr, "%s: --reps and --threads must be at least 1\n", argv[0]);
    return 2;
  }
  Config cfg;
  try {
    cfg = load_config(argv[1], {});
  } catch (const std::exception& e) {  // the config layer's message names the file and key
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
  set_gemm_threads(threads);
  Kokkos::ScopeGuard kokkos;
  const std::vector<Column> cols = columns();
  std::printf("%s, %d thread(s), %s time, best of %d\nBLAS: %s\nbf16: %s\nbatched: %s\n\n", argv[1], threads,
              threads == 1 ? "CPU" : "wall", reps, gemm_backend_name().c_str(),
              gemm_bf16_backend_name().c_str(), gemm_batched_backend_name().c_str());
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    std::printf("core peak: fp32 FMA %.1f GFLOP/s", peak(fma_chains, 32));
  if (__builtin_cpu_supports("avx512bf16"))
    std::printf(", AVX512-BF16 dot product %.1f GFLOP/s", peak(bf16_dot_chains, 64));
#endif
  print_shape_table(cfg, cols, reps, threads);
  print_attention(cfg, reps, threads);
  return 0;
}
