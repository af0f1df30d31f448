// gpu_check: the CUDA path of zeropp on one GPU, standalone (CUDA, cuBLAS and
// NCCL only; no MPI, HDF5 or Kokkos). Built and run by scripts/gpu-check.
//
//  1. every CUDA kernel (kernels/cuda) against its host reference
//     (kernels/quant/quant_ref.hpp, src/base/bf16.hpp) on random and adversarial inputs:
//     zero blocks, huge and near-FLT_MAX values, denormals, tiny normals,
//     rounding ties, NaN and Inf (NaN policy: the whole block NaN), vector and
//     generic paths (block sizes, misaligned pointers);
//  2. cuBLAS GEMM (fp32, bf16 with fp32 accumulation; plain and strided
//     batched; all transpositions) against a host GEMM in double;
//  3. one-rank NCCL all-gather, reduce-scatter and all-to-all round trips on a
//     dedicated stream ordered by events;
//  4. throughput: quantize, dequantize, qgZ reorder+quantize and the fused
//     reductions in GB/s against a device-to-device copy in the same run
//     (goal >= 0.8 of it), on inputs several times the L2 cache; cuBLAS bf16
//     and fp32 TFLOP/s.
// Prints one summary table. Exit status: 0 all checks passed, 1 a mismatch,
// 2 no usable GPU (with the reason), 3 a CUDA/cuBLAS/NCCL call failed.
// --versions prints the loaded driver, runtime, NCCL and cuBLAS versions
// (no device needed) and exits 0.
//
// Sections 1 to 3 are in correctness.cu, section 4, the results table and
// main here; gpu_check.cuh holds what they share.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "kernels/cuda/gemm_cublas.hpp"
#include "kernels/cuda/quantize.cuh"
#include "src/device/cuda_device.hpp"
#include "tools/gpu_check/gpu_check.cuh"

namespace zc = zeropp::cuda;
using gpu_check::Dev;

namespace {

// --- the results table ---------------------------------------------------------

struct Check {
  std::string name;
  int cases = 0, failed = 0;
  std::string first_failure;
};
std::vector<Check> checks;

Check& check(const std::string& name) {
  for (auto& c : checks)
    if (c.name == name) return c;
  checks.push_back({name});
  return checks.back();
}

}  // namespace

void gpu_check::record(const std::string& name, bool ok, const std::string& what) {
  Check& c = check(name);
  ++c.cases;
  if (!ok) {
    if (c.failed++ == 0) c.first_failure = what;
  }
}

namespace {

// --- 4. throughput -----------------------------------------------------------------

struct Perf {
  std::string name;
  double bytes;  // read + written per call
  double best_s, median_s;
  double flops = 0;  // GEMMs
};
std::vector<Perf> perf;

Perf time_it(const std::string& name, double bytes, int reps, const std::function<void()>& f) {
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  for (int i = 0; i < 3; ++i) f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(t0));
    f();
    CK(cudaEventRecord(t1));
    CK(cudaEventSynchronize(t1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, t0, t1));
    t.push_back(ms * 1e-3);
  }
  CK(cudaEventDestroy(t0));
  CK(cudaEventDestroy(t1));
  std::sort(t.begin(), t.end());
  return {name, bytes, t.front(), t[t.size() / 2]};
}

__global__ void fill_kernel(float* x, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    x[i] = (float(h & 0xffffff) / float(1 << 24) - 0.5f) * 4.0f;
  }
}

__global__ void fill_bf16_kernel(__nv_bfloat16* x, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    x[i] = __float2bfloat16(float(h & 0xffff) / 65536.0f - 0.5f);
  }
}

void run_perf(int64_t n, int reps) {
  const int64_t block = 256, nb = n / block;
  const double N = double(n), S = 4.0 * double(nb);
  Dev<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n)), s(static_cast<size_t>(nb)),
      s2(static_cast<size_t>(nb));
  Dev<int8_t> q8(static_cast<size_t>(n));
  Dev<uint8_t> q4(static_cast<size_t>(n / 2)), q4o(static_cast<size_t>(n / 2));
  fill_kernel<<<1024, 256>>>(x.p, static_cast<size_t>(n), 1);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  perf.push_back(time_it("device-to-device copy", 8 * N, reps, [&] {
    CK(cudaMemcpyAsync(y.p, x.p, static_cast<size_t>(n) * 4, cudaMemcpyDeviceToDevice));
  }));
  perf.push_back(
      time_it("quantize int8", 4 * N + N + S, reps, [&] { zc::quantize_int8(x.p, q8.p, s.p, n, block); }));
  perf.push_back(time_it("quantize int4", 4 * N + N / 2 + S, reps,
                         [&] { zc::quantize_int4(x.p, q4.p, s.p, n, block); }));
  perf.push_back(time_it("qgZ reorder+quantize int4 (X 4, Y 2)", 4 * N + N / 2 + S, reps,
                         [&] { zc::qgz_reorder_quantize(4, x.p, q4.p, s.p, n, 4, 2, block); }));
  perf.push_back(time_it("dequantize int8", N + S + 4 * N, reps,
                         [&] { zc::dequantize_int8(q8.p, s.p, y.p, n, block); }));
  perf.push_back(time_it("dequantize int4", N / 2 + S + 4 * N, reps,
                         [&] { zc::dequantize_int4(q4.p, s.p, y.p, n, block); }));
  // Reductions: k = 8 chunks of n/8 (the same input bytes as above).
  const int k = 8;
  const int64_t m = n / k;
  const double Mb = double(m), Sm = 4.0 * double(m / block);
  perf.push_back(time_it("dequant-sum-requant int4 (k 8)", k * (Mb / 2 + Sm) + Mb / 2 + Sm, reps,
                         [&] { zc::dequant_sum_requant_int4(q4.p, s.p, k, q4o.p, s2.p, m, block); }));
  perf.push_back(time_it("dequant-sum-requant int8->int4 (k 8)", k * (Mb + Sm) + Mb / 2 + Sm, reps,
                         [&] { zc::dequant_sum_requant_int8_to_int4(q8.p, s.p, k, q4o.p, s2.p, m, block); }));
  perf.push_back(time_it("dequant-sum int4 (k 8)", k * (Mb / 2 + Sm) + 4 * Mb, reps,
                         [&] { zc::dequant_sum_int4(q4.p, s.p, k, y.p, m, block); }));
}

// A deck's forward GEMMs in bf16 (rows = B*T, width C, the MLP's 4C, V = 50304):
// qkv, attention projection, MLP up and down, the tied head. The rate the
// device-resident training of that deck is compared with (goal >= 0.5 of it).
void deck_gemm_perf(zc::Blas& blas, const char* deck, int rows, int C, int reps) {
  struct Shape {
    int n, k;
  };
  const Shape shapes[] = {{3 * C, C}, {C, C}, {4 * C, C}, {C, 4 * C}, {50304, C}};
  size_t most = 0;
  double flops = 0;
  for (const Shape& s : shapes) {
    most = std::max(most, size_t(s.n) * s.k);
    flops += 2.0 * rows * s.n * s.k;
  }
  Dev<__nv_bfloat16> X(size_t(rows) * 4 * C), W(most), Y(size_t(rows) * 50304);
  fill_bf16_kernel<<<1024, 256>>>(X.p, X.n, 3);
  fill_bf16_kernel<<<1024, 256>>>(W.p, W.n, 4);
  CK(cudaGetLastError());
  Perf p = time_it(std::string("cuBLAS bf16 ") + deck + " forward GEMMs (" + std::to_string(rows) + " rows)",
                   0, reps, [&] {
                     for (const Shape& s : shapes)
                       zc::gemm(blas, zeropp::Trans::N, zeropp::Trans::T, rows, s.n, s.k, 1.0f, X.p, s.k, W.p,
                                s.k, 0.0f, Y.p, s.n);
                   });
  p.flops = flops;
  perf.push_back(p);
}

void run_gemm_perf(int reps) {
  zc::Blas blas;
  const int n = 8192;
  {
    Dev<__nv_bfloat16> A(static_cast<size_t>(n) * n), B(static_cast<size_t>(n) * n),
        C(static_cast<size_t>(n) * n);
    fill_bf16_kernel<<<1024, 256>>>(A.p, A.n, 1);
    fill_bf16_kernel<<<1024, 256>>>(B.p, B.n, 2);
    CK(cudaGetLastError());
    Perf p = time_it("cuBLAS bf16 GEMM 8192^3 (fp32 accumulation)", 0, reps, [&] {
      zc::gemm(blas, zeropp::Trans::N, zeropp::Trans::N, n, n, n, 1.0f, A.p, n, B.p, n, 0.0f, C.p, n);
    });
    p.flops = 2.0 * double(n) * n * n;
    perf.push_back(p);
  }
  {
    const int m = 4096;
    Dev<float> A(static_cast<size_t>(m) * m), B(static_cast<size_t>(m) * m), C(static_cast<size_t>(m) * m);
    fill_kernel<<<1024, 256>>>(A.p, A.n, 1);
    fill_kernel<<<1024, 256>>>(B.p, B.n, 2);
    CK(cudaGetLastError());
    Perf p = time_it("cuBLAS fp32 GEMM 4096^3 (no TF32)", 0, reps, [&] {
      zc::gemm(blas, zeropp::Trans::N, zeropp::Trans::N, m, m, m, 1.0f, A.p, m, B.p, m, 0.0f, C.p, m);
    });
    p.flops = 2.0 * double(m) * m * m;
    perf.push_back(p);
  }
  deck_gemm_perf(blas, "small.toml", 4 * 256, 384, reps);
  deck_gemm_perf(blas, "gpt2-124m.toml", 4 * 1024, 768, reps);
}

// The driver's, runtime's, NCCL's and cuBLAS's versions as loaded here (and
// what this was built against): the first thing to compare when a call fails.
// Needs no device; a query that fails says so.
std::string versions() {
  int drv = 0, rt = 0, nccl = 0, cb[3] = {0, 0, 0};
  const bool drv_ok = cudaDriverGetVersion(&drv) == cudaSuccess,
             rt_ok = cudaRuntimeGetVersion(&rt) == cudaSuccess;
  const bool nccl_ok = ncclGetVersion(&nccl) == ncclSuccess;
  bool cb_ok = true;
  for (int i = 0; i < 3; ++i)
    cb_ok =
        cb_ok && cublasGetProperty(libraryPropertyType(MAJOR_VERSION + i), &cb[i]) == CUBLAS_STATUS_SUCCESS;
  auto num = [](bool ok, int v) { return ok ? std::to_string(v) : std::string("unknown"); };
  return "CUDA driver " + (drv_ok && drv == 0 ? std::string("none (no driver loaded)") : num(drv_ok, drv)) +
         ", runtime " + num(rt_ok, rt) + ", NCCL " + num(nccl_ok, nccl) + ", cuBLAS " +
         (cb_ok ? std::to_string(cb[0]) + "." + std::to_string(cb[1]) + "." + std::to_string(cb[2])
                : "unknown") +
         " (built with CUDA " + std::to_string(CUDART_VERSION) + ", NCCL " +
         std::to_string(NCCL_VERSION_CODE) + ", " + zc::gemm_backend_name() + ")";
}

// Elements of the throughput inputs: a power of two whose smallest input (the
// int4 payload, n/2 bytes) is at least `times` the L2 cache, so that the
// kernels are timed against HBM, not L2 (H200: 50 MiB of L2).
int64_t perf_elements(int times) {
  int dev = 0, l2 = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  int64_t n = int64_t(1) << 24;
  while (n / 2 < int64_t(times) * l2) n *= 2;
  return n;
}

int log2_of(int64_t n) {
  int e = 0;
  while ((int64_t(1) << e) < n) ++e;
  return e;
}

// The results and throughput tables; the exit status.
int print_tables(int64_t n) {
  int failed = 0;
  std::printf("\n| check | cases | result | first mismatch |\n|---|---|---|---|\n");
  for (const auto& c : checks) {
    std::printf("| %s | %d | %s | %s |\n", c.name.c_str(), c.cases, c.failed ? "FAIL" : "pass",
                c.failed ? c.first_failure.c_str() : "");
    failed += c.failed;
  }
  const double copy = perf.front().bytes / perf.front().best_s;
  std::printf(
      "\n| kernel (n = 2^%d floats, block 256) | MB per call | best GB/s | median GB/s | best / copy |\n"
      "|---|---|---|---|---|\n",
      log2_of(n));
  for (const auto& p : perf) {
    if (p.flops > 0) continue;
    const double r = p.bytes / p.best_s / copy;
    std::printf("| %s | %.1f | %.1f | %.1f | %.2f%s |\n", p.name.c_str(), p.bytes / 1e6,
                p.bytes / p.best_s / 1e9, p.bytes / p.median_s / 1e9, r,
                &p == &perf.front() || r >= 0.8 ? "" : " (below 0.8)");
  }
  std::printf("\n| GEMM | best TFLOP/s | median TFLOP/s |\n|---|---|---|\n");
  for (const auto& p : perf)
    if (p.flops > 0)
      std::printf("| %s | %.1f | %.1f |\n", p.name.c_str(), p.flops / p.best_s / 1e12,
                  p.flops / p.median_s / 1e12);
  std::printf("\ngpu-check: %s (%d failed check%s)\n", failed ? "FAILED" : "all checks passed", failed,
              failed == 1 ? "" : "s");
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      quick = true;
    } else if (a == "--versions") {
      std::printf("gpu-check: versions: %s\n", versions().c_str());
      return 0;
    } else {
      std::fprintf(stderr, "usage: gpu_check [--quick | --versions]\n");
      return 2;
    }
  }
  std::string why;
  if (zc::device_count(&why) == 0) {
    std::fprintf(stderr, "gpu-check: no usable GPU: %s\n", why.c_str());
    return 2;
  }
  zc::DeviceInfo dev;
  try {
    dev = zc::select_device(0, 1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu-check: %s\n", e.what());
    return 2;
  }
  std::printf("gpu-check: %s; %s\n", dev.describe().c_str(), versions().c_str());
  int64_t n = 0;
  try {
    gpu_check::run_correctness_checks();
    n = perf_elements(quick ? 2 : 4);
    run_perf(n, quick ? 5 : 20);
    run_gemm_perf(quick ? 3 : 10);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu-check: %s\n", e.what());
    return 3;
  }
  return print_tables(n);
}
