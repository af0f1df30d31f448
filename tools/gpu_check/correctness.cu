// gpu_check sections 1 to 3 (see gpu_check.cu): the CUDA kernels, cuBLAS GEMM
// and one-rank NCCL against host references, on random and adversarial inputs.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cuda/comm_kernels.cuh"
#include "kernels/cuda/gemm_cublas.hpp"
#include "kernels/cuda/quantize.cuh"
#include "kernels/quant/quant_ref.hpp"
#include "src/base/bf16.hpp"
#include "tools/gpu_check/gpu_check.cuh"

namespace zc = zeropp::cuda;
namespace qr = zeropp::quant_ref;

namespace gpu_check {
namespace {

#define CKN(call) GPU_CHECK_CALL(call, ncclSuccess, ncclGetErrorString)

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Bytes equal: "" or where the first difference is.
template <class T>
std::string diff_bytes(const std::vector<T>& got, const std::vector<T>& want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0)
      return "first difference at [" + std::to_string(i) + "]: " + std::to_string(double(got[i])) + " vs " +
             std::to_string(double(want[i]));
  return "";
}

// Floats bit for bit, NaN == NaN whatever the payload (documented in quantize.cuh).
std::string diff_floats(const std::vector<float>& got, const std::vector<float>& want, bool nan_any_payload) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (nan_any_payload && std::isnan(got[i]) && std::isnan(want[i])) continue;
    if (bits(got[i]) != bits(want[i])) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "first difference at [%zu]: %.9g (0x%08x) vs %.9g (0x%08x)", i, got[i],
                    bits(got[i]), want[i], bits(want[i]));
      return buf;
    }
  }
  return "";
}

// --- inputs --------------------------------------------------------------------

// Block-wise patterns: random magnitudes per block, then adversarial blocks.
std::vector<float> make_input(int64_t n, int64_t block, int qmax, bool adversarial, std::mt19937& rng) {
  std::vector<float> x(static_cast<size_t>(n));
  std::normal_distribution<float> g(0, 1);
  std::uniform_real_distribution<float> u(-1, 1), e(-6, 6);
  for (int64_t b = 0; b < n / block; ++b) {
    float* xb = x.data() + b * block;
    const float mag = std::pow(10.0f, e(rng));
    for (int64_t i = 0; i < block; ++i) xb[i] = g(rng) * mag;
    if (!adversarial) continue;
    switch (b % 11) {
      case 1:
        std::fill(xb, xb + block, 0.0f);
        break;
      case 2:
        xb[block / 3] = -3e30f;
        break;
      case 3:
        for (int64_t i = 0; i < block; ++i) xb[i] = u(rng) * 1e-39f;
        break;  // denormals
      case 4:
        for (int64_t i = 0; i < block; ++i) xb[i] = u(rng) * 1e-25f;
        break;  // normal, < 2^-64
      case 5:
        xb[block - 1] = std::numeric_limits<float>::quiet_NaN();
        break;
      case 6:
        xb[0] = -std::numeric_limits<float>::infinity();
        break;
      case 7:
        for (int64_t i = 0; i < block; ++i) xb[i] = u(rng) * 3.4e38f;
        xb[0] = 3.4028235e38f;
        break;
      case 8:  // exact rounding ties: m = Q gives scale 1, inv 1; values k + 1/2
        for (int64_t i = 0; i < block; ++i) xb[i] = float(i % qmax) + 0.5f * ((i & 1) ? -1.0f : 1.0f);
        xb[0] = float(qmax);
        break;
      case 9:
        xb[0] = 1e-45f;
        xb[block - 1] = -2e-40f;
        break;  // denormals next to normals
      case 10:
        xb[1 % block] = std::numeric_limits<float>::signaling_NaN();
        break;
      default:
        break;
    }
  }
  return x;
}

// --- 1. quantization kernels ---------------------------------------------------

template <int Bits>
void check_quantize(int64_t block, int64_t nblocks, size_t misalign, bool adversarial, std::mt19937& rng) {
  using St = typename qr::Format<Bits>::Storage;
  const int64_t n = block * nblocks, qb = qr::Format<Bits>::bytes(n);
  const std::string tag = " (block " + std::to_string(block) + (misalign ? ", misaligned" : "") +
                          (adversarial ? ", adversarial)" : ", random)");
  const auto x = make_input(n, block, qr::Format<Bits>::kQmax, adversarial, rng);
  std::vector<St> q_ref(static_cast<size_t>(qb));
  std::vector<float> s_ref(static_cast<size_t>(nblocks));
  qr::quantize<Bits>(x.data(), q_ref.data(), s_ref.data(), n, block);

  Dev<float> dx(static_cast<size_t>(n), misalign * 4), ds(static_cast<size_t>(nblocks)),
      dd(static_cast<size_t>(n), misalign * 4);
  Dev<St> dq(static_cast<size_t>(qb), misalign);
  dx.up(x);
  if constexpr (Bits == 8)
    zc::quantize_int8(dx.p, dq.p, ds.p, n, block);
  else
    zc::quantize_int4(dx.p, dq.p, ds.p, n, block);
  CK(cudaDeviceSynchronize());
  const std::string name = "quantize int" + std::to_string(Bits);
  std::string d = diff_bytes(dq.down(), q_ref);
  if (d.empty()) d = diff_floats(ds.down(), s_ref, false);
  record(name, d.empty(), d + tag);

  // dequantize (overwrite), then dequantize_add on top of it
  std::vector<float> y_ref(static_cast<size_t>(n));
  qr::dequantize<Bits, false>(q_ref.data(), s_ref.data(), y_ref.data(), n, block);
  if constexpr (Bits == 8)
    zc::dequantize_int8(dq.p, ds.p, dd.p, n, block);
  else
    zc::dequantize_int4(dq.p, ds.p, dd.p, n, block);
  CK(cudaDeviceSynchronize());
  d = diff_floats(dd.down(), y_ref, true);
  record("dequantize int" + std::to_string(Bits), d.empty(), d + tag);
  qr::dequantize<Bits, true>(q_ref.data(), s_ref.data(), y_ref.data(), n, block);
  if constexpr (Bits == 8)
    zc::dequantize_int8_add(dq.p, ds.p, dd.p, n, block);
  else
    zc::dequantize_int4_add(dq.p, ds.p, dd.p, n, block);
  CK(cudaDeviceSynchronize());
  d = diff_floats(dd.down(), y_ref, true);
  record("dequantize_add int" + std::to_string(Bits), d.empty(), d + tag);
  // dequantize rounded to bf16 (qwZ's gather on a bf16 wire)
  qr::dequantize_bf16<Bits>(q_ref.data(), s_ref.data(), y_ref.data(), n, block);
  zc::dequantize_bf16(Bits, dq.p, ds.p, dd.p, n, block);
  CK(cudaDeviceSynchronize());
  d = diff_floats(dd.down(), y_ref, true);
  record("dequantize_bf16 int" + std::to_string(Bits), d.empty(), d + tag);
}

template <int Bits>
void check_qgz(int64_t block, int X, int Y, int64_t s_blocks, std::mt19937& rng) {
  using St = typename qr::Format<Bits>::Storage;
  const int64_t s = block * s_blocks, n = int64_t(X) * Y * s, nb = n / block, qb = qr::Format<Bits>::bytes(n);
  const auto g = make_input(n, block, qr::Format<Bits>::kQmax, true, rng);
  std::vector<St> q_ref(static_cast<size_t>(qb));
  std::vector<float> s_ref(static_cast<size_t>(nb));
  qr::qgz_reorder_quantize<Bits>(g.data(), q_ref.data(), s_ref.data(), n, X, Y, block);
  Dev<float> dg(static_cast<size_t>(n)), ds(static_cast<size_t>(nb));
  Dev<St> dq(static_cast<size_t>(qb));
  dg.up(g);
  zc::qgz_reorder_quantize(Bits, dg.p, dq.p, ds.p, n, X, Y, block);
  CK(cudaDeviceSynchronize());
  std::string d = diff_bytes(dq.down(), q_ref);
  if (d.empty()) d = diff_floats(ds.down(), s_ref, false);
  record(
      "qgZ reorder+quantize int" + std::to_string(Bits), d.empty(),
      d + " (X " + std::to_string(X) + ", Y " + std::to_string(Y) + ", block " + std::to_string(block) + ")");
}

// k chunks quantized on the host at InBits (some with NaN blocks or sums that overflow).
template <int InBits, int OutBits>
void check_reduce(int64_t block, int64_t nblocks, int k, std::mt19937& rng) {
  using Si = typename qr::Format<InBits>::Storage;
  using So = typename qr::Format<OutBits>::Storage;
  const int64_t n = block * nblocks, cb = qr::Format<InBits>::bytes(n), ob = qr::Format<OutBits>::bytes(n);
  std::vector<Si> q(static_cast<size_t>(k * cb));
  std::vector<float> sc(static_cast<size_t>(k * nblocks));
  for (int j = 0; j < k; ++j) {
    const auto x = make_input(n, block, qr::Format<InBits>::kQmax, true, rng);
    qr::quantize<InBits>(x.data(), q.data() + j * cb, sc.data() + j * nblocks, n, block);
  }
  const std::string tag = " (block " + std::to_string(block) + ", k " + std::to_string(k) + ")";
  Dev<Si> dq(q.size());
  Dev<float> ds(sc.size()), dsum(static_cast<size_t>(n)), dso(static_cast<size_t>(nblocks));
  Dev<So> dqo(static_cast<size_t>(ob));
  dq.up(q);
  ds.up(sc);
  // fused requantization
  std::vector<So> qo_ref(static_cast<size_t>(ob));
  std::vector<float> so_ref(static_cast<size_t>(nblocks));
  qr::dequant_sum_requant<InBits, OutBits>(q.data(), sc.data(), k, qo_ref.data(), so_ref.data(), n, block);
  if constexpr (InBits == 4 && OutBits == 8)
    zc::dequant_sum_requant_int4_to_int8(dq.p, ds.p, k, dqo.p, dso.p, n, block);
  else if constexpr (InBits == 4)
    zc::dequant_sum_requant_int4(dq.p, ds.p, k, dqo.p, dso.p, n, block);
  else if constexpr (OutBits == 8)
    zc::dequant_sum_requant_int8(dq.p, ds.p, k, dqo.p, dso.p, n, block);
  else
    zc::dequant_sum_requant_int8_to_int4(dq.p, ds.p, k, dqo.p, dso.p, n, block);
  CK(cudaDeviceSynchronize());
  std::string d = diff_bytes(dqo.down(), qo_ref);
  if (d.empty()) d = diff_floats(dso.down(), so_ref, false);
  record("dequant-sum-requant int" + std::to_string(InBits) + "->int" + std::to_string(OutBits), d.empty(),
         d + tag);
  // final sum
  if constexpr (InBits == OutBits) {
    std::vector<float> sum_ref(static_cast<size_t>(n));
    qr::dequant_sum<InBits>(q.data(), sc.data(), k, sum_ref.data(), n, block);
    if constexpr (InBits == 4)
      zc::dequant_sum_int4(dq.p, ds.p, k, dsum.p, n, block);
    else
      zc::dequant_sum_int8(dq.p, ds.p, k, dsum.p, n, block);
    CK(cudaDeviceSynchronize());
    d = diff_floats(dsum.down(), sum_ref, true);
    record("dequant-sum int" + std::to_string(InBits), d.empty(), d + tag);
  }
}

void check_comm_kernels(std::mt19937& rng) {
  const int64_t n = 100003;
  auto x = make_input(n - 3, 100, 127, true, rng);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(3.4028235e38f);  // rounds past the largest bf16: Inf
  x.push_back(-std::numeric_limits<float>::quiet_NaN());
  std::vector<uint16_t> h_ref(x.size());
  zeropp::fp32_to_bf16(x.data(), h_ref.data(), n);
  Dev<float> dx(x.size()), dy(x.size()), dacc(x.size());
  Dev<uint16_t> dh(x.size());
  dx.up(x);
  zc::to_bf16(dx.p, dh.p, n);
  CK(cudaDeviceSynchronize());
  std::string d = diff_bytes(dh.down(), h_ref);
  record("comm: fp32 -> bf16", d.empty(), d);
  // acc = wire + own, wire fp32 and bf16
  const auto own = make_input(n - 3, 100, 127, false, rng);
  std::vector<float> own_full(own);
  own_full.resize(x.size(), 1.0f);
  dy.up(own_full);
  for (bool bf : {false, true}) {
    std::vector<float> want(x.size());
    for (int64_t i = 0; i < n; ++i)
      want[static_cast<size_t>(i)] =
          (bf ? zeropp::bf16_to_fp32(h_ref[static_cast<size_t>(i)]) : x[static_cast<size_t>(i)]) +
          own_full[static_cast<size_t>(i)];
    zc::ring_accumulate(bf ? static_cast<const void*>(dh.p) : dx.p, bf, dy.p, dacc.p, n);
    CK(cudaDeviceSynchronize());
    d = diff_floats(dacc.down(), want, true);
    record("comm: ring accumulate", d.empty(), d + (bf ? " (bf16 wire)" : " (fp32 wire)"));
  }
  // member-order sums
  const int p = 5;
  const int64_t m = 20000;
  std::vector<float> all(static_cast<size_t>(p * m));
  std::normal_distribution<float> g(0, 1);
  for (auto& v : all) v = g(rng) * 1e3f;
  std::vector<float> want(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) {
    float s = all[static_cast<size_t>(i)];
    for (int r = 1; r < p; ++r) s += all[static_cast<size_t>(r * m + i)];
    want[static_cast<size_t>(i)] = s;
  }
  Dev<float> dall(all.size()), dout(static_cast<size_t>(m));
  dall.up(all);
  zc::sum_members(dall.p, p, dout.p, m);
  CK(cudaDeviceSynchronize());
  d = diff_floats(dout.down(), want, false);
  record("comm: member-order sum", d.empty(), d);
}

// --- 2. cuBLAS -------------------------------------------------------------------

// Row-major host GEMM in double; also the bound sum |alpha a b| + |beta c| per element.
void host_gemm(zeropp::Trans ta, zeropp::Trans tb, int M, int N, int K, double alpha,
               const std::vector<float>& A, int lda, const std::vector<float>& B, int ldb, double beta,
               const std::vector<float>& C, int ldc, std::vector<double>& out, std::vector<double>& bound) {
  out.assign(static_cast<size_t>(M) * ldc, 0);
  bound.assign(static_cast<size_t>(M) * ldc, 0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double acc = 0, mag = 0;
      for (int k = 0; k < K; ++k) {
        const double a = ta == zeropp::Trans::N ? A[static_cast<size_t>(i) * lda + k]
                                                : A[static_cast<size_t>(k) * lda + i];
        const double b = tb == zeropp::Trans::N ? B[static_cast<size_t>(k) * ldb + j]
                                                : B[static_cast<size_t>(j) * ldb + k];
        acc += a * b;
        mag += std::fabs(a * b);
      }
      const double c = C[static_cast<size_t>(i) * ldc + j];
      out[static_cast<size_t>(i) * ldc + j] = alpha * acc + beta * c;
      bound[static_cast<size_t>(i) * ldc + j] = std::fabs(alpha) * mag + std::fabs(beta * c);
    }
}

// One GEMM case: transposes, sizes, padded leading dimensions and batch strides.
struct GemmCase {
  zeropp::Trans ta, tb;
  int M, N, K, batch;
  float alpha, beta;
  int lda, ldb, ldc;
  size_t sa, sb, sc;
  GemmCase(zeropp::Trans ta_, zeropp::Trans tb_, int M_, int N_, int K_, int batch_, float alpha_,
           float beta_)
      : ta(ta_), tb(tb_), M(M_), N(N_), K(K_), batch(batch_), alpha(alpha_), beta(beta_) {
    using zeropp::Trans;
    lda = (ta == Trans::N ? K : M) + 3, ldb = (tb == Trans::N ? N : K) + 5, ldc = N + 2;
    sa = static_cast<size_t>(ta == Trans::N ? M : K) * lda,
    sb = static_cast<size_t>(tb == Trans::N ? K : N) * ldb, sc = static_cast<size_t>(M) * ldc;
  }
};

std::vector<__nv_bfloat16> to_bf16_values(const std::vector<float>& v) {
  std::vector<uint16_t> bits(v.size());
  zeropp::fp32_to_bf16(v.data(), bits.data(), int64_t(v.size()));
  std::vector<__nv_bfloat16> h(v.size());
  std::memcpy(h.data(), bits.data(), 2 * bits.size());
  return h;
}

// The strided-batched GEMM's results, then the plain gemm of batch 0, on the
// device in T (float or __nv_bfloat16), as floats.
template <typename T>
std::vector<float> device_gemm(zc::Blas& blas, const GemmCase& c, const std::vector<float>& A,
                               const std::vector<float>& B, const std::vector<float>& C) {
  const auto up = [](const std::vector<float>& v) {
    if constexpr (std::is_same_v<T, float>)
      return v;
    else
      return to_bf16_values(v);
  };
  Dev<T> dA(A.size()), dB(B.size()), dC(C.size());
  dA.up(up(A)), dB.up(up(B)), dC.up(up(C));
  zc::gemm_strided_batched(blas, c.ta, c.tb, c.M, c.N, c.K, c.alpha, dA.p, c.lda, int64_t(c.sa), dB.p, c.ldb,
                           int64_t(c.sb), c.beta, dC.p, c.ldc, int64_t(c.sc), c.batch);
  Dev<T> dC0(c.sc);
  auto c0 = up(C);
  c0.resize(c.sc);
  dC0.up(c0);
  zc::gemm(blas, c.ta, c.tb, c.M, c.N, c.K, c.alpha, dA.p, c.lda, dB.p, c.ldb, c.beta, dC0.p, c.ldc);
  CK(cudaDeviceSynchronize());
  auto h = dC.down();
  const auto h0 = dC0.down();
  h.insert(h.end(), h0.begin(), h0.end());
  if constexpr (std::is_same_v<T, float>) {
    return h;
  } else {
    std::vector<uint16_t> bits(h.size());
    std::memcpy(bits.data(), h.data(), 2 * h.size());
    std::vector<float> got(h.size());
    zeropp::bf16_to_fp32(bits.data(), got.data(), int64_t(h.size()));
    return got;
  }
}

// The first element of `got` (the batch results, then the plain gemm of batch 0
// at index `batch`) outside its tolerance around the host's product; empty if none.
std::string first_mismatch(const GemmCase& c, bool bf, const std::vector<float>& A,
                           const std::vector<float>& B, const std::vector<float>& C,
                           const std::vector<float>& got) {
  const double eps = bf ? 1.0 / 256 : 1.0 / (1 << 22);
  for (int bi = 0; bi <= c.batch; ++bi) {
    const size_t src = size_t(bi == c.batch ? 0 : bi);
    const auto slice = [&](const std::vector<float>& v, size_t s) {
      return std::vector<float>(v.begin() + long(src * s), v.begin() + long((src + 1) * s));
    };
    std::vector<double> ref, bound;
    host_gemm(c.ta, c.tb, c.M, c.N, c.K, c.alpha, slice(A, c.sa), c.lda, slice(B, c.sb), c.ldb, c.beta,
              slice(C, c.sc), c.ldc, ref, bound);
    for (int i = 0; i < c.M; ++i)
      for (int j = 0; j < c.N; ++j) {
        const size_t at = static_cast<size_t>(i) * c.ldc + j;
        const double err = std::fabs(double(got[bi * c.sc + at]) - ref[at]);
        const double tol = eps * std::fabs(ref[at]) + c.K * 1.2e-7 * bound[at] + 1e-30;
        if (!(err <= tol)) {
          char buf[200];
          std::snprintf(buf, sizeof buf, "batch %d C[%d,%d] = %.7g, host %.7g (tolerance %.3g)", bi, i, j,
                        got[bi * c.sc + at], ref[at], tol);
          return buf;
        }
      }
  }
  return "";
}

void check_gemm(std::mt19937& rng) {
  using zeropp::Trans;
  zc::Blas blas;
  std::normal_distribution<float> g(0, 1);
  for (bool bf : {false, true})
    for (Trans ta : {Trans::N, Trans::T})
      for (Trans tb : {Trans::N, Trans::T}) {
        const GemmCase c(ta, tb, 123, 77, 301, 3, 0.7f, 0.3f);
        std::vector<float> A(c.sa * c.batch), B(c.sb * c.batch), C(c.sc * c.batch);
        for (auto* v : {&A, &B, &C})
          for (auto& e : *v) e = g(rng);
        if (bf)  // the inputs as bf16 values, so host and device multiply the same numbers
          for (auto* v : {&A, &B, &C})
            for (auto& e : *v) e = zeropp::bf16_to_fp32(zeropp::fp32_to_bf16(e));
        const std::vector<float> got =
            bf ? device_gemm<__nv_bfloat16>(blas, c, A, B, C) : device_gemm<float>(blas, c, A, B, C);
        const std::string what = first_mismatch(c, bf, A, B, C, got);
        record(std::string("cuBLAS GEMM ") + (bf ? "bf16" : "fp32"), what.empty(),
               what + " (op " + (ta == Trans::N ? "N" : "T") + (tb == Trans::N ? "N" : "T") + ")");
      }
}

// --- 3. NCCL, one rank ---------------------------------------------------------------

void check_nccl() {
  int dev = 0;
  CK(cudaGetDevice(&dev));
  ncclComm_t comm;
  CKN(ncclCommInitAll(&comm, 1, &dev));
  cudaStream_t compute, comm_stream;
  CK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&comm_stream, cudaStreamNonBlocking));
  cudaEvent_t ready, done;
  CK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  const size_t n = static_cast<size_t>(1) << 22;  // 16 MiB of floats
  std::vector<float> h(n);
  std::mt19937 rng(5);
  std::normal_distribution<float> g(0, 1);
  for (auto& v : h) v = g(rng);
  Dev<float> a(n), b(n), c(n);
  // Producer writes a on the compute stream; the comm stream waits on an event, never the host.
  auto run = [&](const char* name, const std::function<void()>& enqueue) {
    CK(cudaMemsetAsync(b.p, 0xff, n * 4, compute));
    CK(cudaMemcpyAsync(a.p, h.data(), n * 4, cudaMemcpyHostToDevice, compute));
    CK(cudaEventRecord(ready, compute));
    CK(cudaStreamWaitEvent(comm_stream, ready, 0));
    enqueue();
    CK(cudaEventRecord(done, comm_stream));
    CK(cudaStreamWaitEvent(compute, done, 0));
    CK(cudaMemcpyAsync(c.p, b.p, n * 4, cudaMemcpyDeviceToDevice,
                       compute));  // consumer on the compute stream
    CK(cudaStreamSynchronize(compute));
    const std::string d = diff_floats(c.down(), h, false);
    record("NCCL 1-rank round trip", d.empty(), d + " (" + name + ")");
  };
  run("all-gather", [&] { CKN(ncclAllGather(a.p, b.p, n, ncclFloat, comm, comm_stream)); });
  run("reduce-scatter", [&] { CKN(ncclReduceScatter(a.p, b.p, n, ncclFloat, ncclSum, comm, comm_stream)); });
  run("all-to-all (send/recv)", [&] {
    CKN(ncclGroupStart());
    CKN(ncclSend(a.p, n * 4, ncclUint8, 0, comm, comm_stream));
    CKN(ncclRecv(b.p, n * 4, ncclUint8, 0, comm, comm_stream));
    CKN(ncclGroupEnd());
  });
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= 22800
  // Built against 2.28 or later, but the library loaded here may be older and
  // binds ncclAlltoAll only when called: ask it first.
  int loaded = 0;
  CKN(ncclGetVersion(&loaded));
  if (loaded >= 22800)
    run("ncclAlltoAll", [&] { CKN(ncclAlltoAll(a.p, b.p, n, ncclFloat, comm, comm_stream)); });
  else
    std::printf("gpu-check: NOT RUN: ncclAlltoAll (NCCL >= 2.28; the loaded NCCL is %d)\n", loaded);
#endif
  run("broadcast", [&] { CKN(ncclBroadcast(a.p, b.p, n, ncclFloat, 0, comm, comm_stream)); });
  CK(cudaEventDestroy(ready));
  CK(cudaEventDestroy(done));
  CK(cudaStreamDestroy(compute));
  CK(cudaStreamDestroy(comm_stream));
  ncclCommDestroy(comm);
}

}  // namespace

void run_correctness_checks() {
  std::mt19937 rng(20240607);
  // vector path (block 128..1024), generic path (64, 2048, 6, misaligned)
  for (int64_t block : {int64_t(256), int64_t(128), int64_t(1024), int64_t(64), int64_t(2048), int64_t(6)})
    for (bool adv : {false, true}) {
      check_quantize<8>(block, 700, 0, adv, rng);
      check_quantize<4>(block, 700, 0, adv, rng);
    }
  check_quantize<8>(256, 300, 1, true, rng);
  check_quantize<4>(256, 300, 1, true, rng);
  for (int64_t block : {int64_t(256), int64_t(64)}) {
    check_qgz<4>(block, 2, 3, 5, rng);
    check_qgz<4>(block, 4, 2, 3, rng);
    check_qgz<8>(block, 2, 3, 5, rng);
    check_qgz<4>(block, 1, 4, 2, rng);
    check_qgz<4>(block, 8, 1, 2, rng);
  }
  for (int64_t block : {int64_t(256), int64_t(1024), int64_t(64), int64_t(6)})
    for (int k : {1, 2, 3, 8}) {
      check_reduce<4, 4>(block, 300, k, rng);
      check_reduce<8, 8>(block, 300, k, rng);
      check_reduce<8, 4>(block, 300, k, rng);
      check_reduce<4, 8>(block, 300, k, rng);
    }
  check_comm_kernels(rng);
  check_gemm(rng);
  check_nccl();
}

}  // namespace gpu_check
