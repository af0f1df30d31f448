// zeropp_quant_bench [--n N] [--block B] [--reps R] [--accuracy-n M]
//
// 1. Throughput of the quantization kernels (kernels/quant/quantize, kernels/quant/quant_reduce)
//    against a STREAM-like copy measured in the same run (std::memcpy and
//    Kokkos::deep_copy of N floats). Bytes per call = bytes read + bytes written
//    (no write-allocate traffic, as STREAM counts). Each kernel runs once to warm
//    up, then R times; the table gives the best and the median GB/s and the ratio
//    of the best to the best copy.
// 2. Accuracy of blockwise int8/int4 against one scale per tensor on M synthetic
//    weights: normal(0, 0.02) with one outlier (|x| uniform in [0.2, 1]) per 4096
//    elements on average. Relative L2 error ||x - deq(q(x))|| / ||x|| and the
//    max absolute error, with the scale overhead (4 bytes per block) in percent
//    of the payload.
// ZEROPP_MAX_CPU_ISA=avx2|baseline caps the instruction set of the quantization loops
// (kernels/quant/quant_isa.hpp); the first line of the table names the one used.
// Both tables are printed as Markdown (docs/performance.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/ops/convert.hpp"
#include "kernels/quant/qgz_reorder.hpp"
#include "kernels/quant/quant_isa.hpp"
#include "kernels/quant/quant_reduce.hpp"
#include "kernels/quant/quantize.hpp"

using namespace zeropp;

namespace {

struct Options {
  int64_t n = int64_t(1) << 24;
  int64_t block = 2048;
  int reps = 20;
  int64_t accuracy_n = int64_t(1) << 22;
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--n N] [--block B] [--reps R] [--accuracy-n M]\n", argv0);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(argv[0]);
    const long long v = std::atoll(argv[++i]);
    if (v <= 0) usage(argv[0]);
    if (a == "--n") {
      o.n = v;
    } else if (a == "--block") {
      o.block = v;
    } else if (a == "--reps") {
      o.reps = int(v);
    } else if (a == "--accuracy-n") {
      o.accuracy_n = v;
    } else {
      usage(argv[0]);
    }
  }
  // Round n down to a multiple of 4*block so that every kernel (k = 4 chunks of int4) accepts it.
  o.n = std::max(o.n / (4 * o.block), int64_t(1)) * 4 * o.block;
  return o;
}

struct Row {
  std::string name;
  double bytes;
  double best_s, median_s;
};

Row time_it(const std::string& name, double bytes, int reps, const std::function<void()>& f) {
  f();
  Kokkos::fence();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    Kokkos::fence();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return {name, bytes, t.front(), t[t.size() / 2]};
}

void throughput(const Options& o) {
  const int64_t n = o.n, block = o.block, nb = n / block;
  std::mt19937 rng(1);
  std::normal_distribution<float> g(0, 0.02f);
  Buf<float> x("x", n), y("y", n), scales4("scales4", 4 * nb), scales8("scales8", 4 * nb);
  Buf<float> scales_out("scales_out", nb);
  Buf<int8_t> q8("q8", 4 * n), q8_out("q8_out", n);
  Buf<uint8_t> q4("q4", 4 * n / 2), q4_out("q4_out", n / 2);
  for (int64_t i = 0; i < n; ++i) x(i) = g(rng);
  for (int j = 0; j < 4; ++j) {  // four different chunks for the reductions
    for (int64_t i = 0; i < n; ++i) y(i) = g(rng);
    quantize_int4(y, sub(q4, j * n / 2, n / 2), sub(scales4, j * nb, nb), n, block);
    quantize_int8(y, sub(q8, j * n, n), sub(scales8, j * nb, nb), n, block);
  }

  const double N = double(n), S = 4.0 * double(nb);  // elements; bytes of one chunk's scales
  std::vector<Row> rows;
  rows.push_back(time_it("memcpy fp32", 8 * N, o.reps, [&] { std::memcpy(y.data(), x.data(), 4 * n); }));
  rows.push_back(time_it("Kokkos::deep_copy fp32", 8 * N, o.reps, [&] { Kokkos::deep_copy(y, x); }));
  rows.push_back(time_it("quantize_int8", 4 * N + N + S, o.reps,
                         [&] { quantize_int8(x, q8_out, scales_out, n, block); }));
  rows.push_back(time_it("quantize_int4", 4 * N + N / 2 + S, o.reps,
                         [&] { quantize_int4(x, q4_out, scales_out, n, block); }));
  rows.push_back(
      time_it("dequantize_int8", N + S + 4 * N, o.reps, [&] { dequantize_int8(q8, scales8, y, n, block); }));
  rows.push_back(time_it("dequantize_int4", N / 2 + S + 4 * N, o.reps,
                         [&] { dequantize_int4(q4, scales4, y, n, block); }));
  rows.push_back(time_it("dequantize_int8, then round_to_bf16", N + S + 4 * N, o.reps, [&] {
    dequantize_int8(q8, scales8, y, n, block);
    round_to_bf16(y, n);
  }));
  rows.push_back(time_it("dequantize_int8_bf16 (fused)", N + S + 4 * N, o.reps,
                         [&] { dequantize_int8_bf16(q8, scales8, y, n, block); }));
  rows.push_back(time_it("qgz_reorder, then quantize_int4 (2 x 2)", 4 * N + N / 2 + S, o.reps, [&] {
    qgz_reorder(x, y, n, 2, 2);
    quantize_int4(y, q4_out, scales_out, n, block);
  }));
  rows.push_back(time_it("qgz_reorder_quantize_int4 (fused, 2 x 2)", 4 * N + N / 2 + S, o.reps,
                         [&] { qgz_reorder_quantize_int4(x, q4_out, scales_out, n, 2, 2, block); }));
  rows.push_back(time_it("dequantize_int4_add", N / 2 + S + 8 * N, o.reps,
                         [&] { dequantize_int4_add(q4, scales4, y, n, block); }));
  for (int k : {2, 4}) {
    rows.push_back(time_it("dequant_sum_requant_int4, k = " + std::to_string(k), k * (N / 2 + S) + N / 2 + S,
                           o.reps,
                           [&] { dequant_sum_requant_int4(q4, scales4, k, q4_out, scales_out, n, block); }));
  }
  rows.push_back(time_it("dequant_sum_requant_int8_to_int4, k = 4", 4 * (N + S) + N / 2 + S, o.reps, [&] {
    dequant_sum_requant_int8_to_int4(q8, scales8, 4, q4_out, scales_out, n, block);
  }));
  rows.push_back(time_it("dequant_sum_int4, k = 4", 4 * (N / 2 + S) + 4 * N, o.reps,
                         [&] { dequant_sum_int4(q4, scales4, 4, y, n, block); }));

  const double copy_best = std::max(rows[0].bytes / rows[0].best_s, rows[1].bytes / rows[1].best_s);
  std::printf("n = %lld floats, block = %lld, reps = %d, %s, 1 thread, quantization loops: %s\n\n",
              (long long)n, (long long)block, o.reps, ExecSpace::name(), quant_kernels().name);
  std::printf(
      "| kernel | MB moved per call | best GB/s | median GB/s | Gelem/s (best) | best / best copy |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    const double best = r.bytes / r.best_s / 1e9, median = r.bytes / r.median_s / 1e9;
    std::printf("| %s | %.1f | %.2f | %.2f | %.3f | %.2f |\n", r.name.c_str(), r.bytes / 1e6, best, median,
                N / r.best_s / 1e9, best * 1e9 / copy_best);
  }
  std::printf("\n");
}

struct Error {
  double rel_l2, max_abs;
};

template <int Bits>
Error error_of(CVec<float> x, int64_t n, int64_t block) {
  Buf<typename QuantFormat<Bits>::Storage> q("q", QuantFormat<Bits>::bytes(n));
  Buf<float> s("s", n / block), d("d", n);
  if constexpr (Bits == 8) {
    quantize_int8(x, q, s, n, block);
    dequantize_int8(q, s, d, n, block);
  } else {
    quantize_int4(x, q, s, n, block);
    dequantize_int4(q, s, d, n, block);
  }
  double num = 0, den = 0, mx = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double e = double(x(i)) - double(d(i));
    num += e * e;
    den += double(x(i)) * double(x(i));
    mx = std::max(mx, std::fabs(e));
  }
  return {std::sqrt(num / den), mx};
}

void accuracy(const Options& o) {
  const int64_t n = std::max(o.accuracy_n / 8192, int64_t(1)) * 8192;
  std::mt19937 rng(2);
  std::normal_distribution<float> g(0, 0.02f);
  std::uniform_real_distribution<float> u(0.2f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 4095);
  Buf<float> x("weights", n);
  int64_t outliers = 0;
  for (int64_t i = 0; i < n; ++i) {
    x(i) = g(rng);
    if (pick(rng) == 0) {
      x(i) = (x(i) < 0 ? -1 : 1) * u(rng);
      ++outliers;
    }
  }
  std::printf("accuracy: %lld synthetic weights, normal(0, 0.02), %lld outliers with |x| in [0.2, 1]\n\n",
              (long long)n, (long long)outliers);
  std::printf(
      "| block | int8 rel. L2 | int8 max abs | int4 rel. L2 | int4 max abs | scales (int8 / int4 payload) "
      "|\n");
  std::printf("|---:|---:|---:|---:|---:|---:|\n");
  std::vector<int64_t> blocks = {32, 64, 128, 256, 512, 2048, 8192, n};
  for (int64_t b : blocks) {
    const Error e8 = error_of<8>(x, n, b), e4 = error_of<4>(x, n, b);
    const std::string name = b == n ? "tensor (" + std::to_string(n) + ")" : std::to_string(b);
    std::printf("| %s | %.3e | %.3e | %.3e | %.3e | %.3f%% / %.3f%% |\n", name.c_str(), e8.rel_l2, e8.max_abs,
                e4.rel_l2, e4.max_abs, 400.0 / double(b), 800.0 / double(b));
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  Kokkos::ScopeGuard kokkos;
  throughput(o);
  accuracy(o);
  return 0;
}
