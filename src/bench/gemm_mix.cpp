#include "src/bench/gemm_mix.hpp"

#include <mpi.h>

#include <algorithm>
#include <random>

#include "kernels/gemm/gemm_bf16.hpp"

namespace zeropp {

// Each linear layer runs out = in·W, din = dout·W^T and dW = in^T·dout. Its
// forward accumulates onto C (the bias rows, or the residual seeded by the
// LayerNorm before it: gpt2.cpp), din overwrites, dW accumulates into the
// gradient; the LM head's three products overwrite (one chunk: with several,
// lm_head_loss.cpp accumulates dwte after the first).
std::vector<GemmShape> model_gemm_shapes(const ModelConfig& m, int BT) {
  const int C = m.n_embd, V = m.vocab_size, L = m.n_layer;
  std::vector<GemmShape> s;
  const auto linear = [&](int in, int out, int count) {
    s.push_back({Trans::N, Trans::N, BT, out, in, count, 1.0f});  // forward
    s.push_back({Trans::N, Trans::T, BT, in, out, count, 0.0f});  // input gradient
    s.push_back({Trans::T, Trans::N, in, out, BT, count, 1.0f});  // weight gradient
  };
  linear(C, 3 * C, L);
  linear(C, C, L);
  linear(C, 4 * C, L);
  linear(4 * C, C, L);
  s.push_back({Trans::N, Trans::T, BT, V, C, 1, 0.0f});  // LM head forward: lnf·wte^T
  s.push_back({Trans::N, Trans::N, BT, C, V, 1, 0.0f});  // dlnf = dlogits·wte
  s.push_back({Trans::T, Trans::N, V, C, BT, 1, 0.0f});  // dwte = dlogits^T·lnf
  return s;
}

namespace {

int64_t max_over(const std::vector<GemmShape>& shapes, int64_t (*size)(const GemmShape&)) {
  int64_t n = 0;
  for (const GemmShape& s : shapes) n = std::max(n, size(s));
  return n;
}

}  // namespace

// One pool for every shape's A and B (the largest shape's), one for C:
// the LM head's [BT, V] operand once, not per shape.
GemmMix::GemmMix(std::vector<GemmShape> shapes, Precision prec)
    : shapes_(std::move(shapes)),
      prec_(prec),
      operands_("bench GEMM A and B",
                max_over(shapes_, [](const GemmShape& s) { return int64_t(s.K) * (int64_t(s.M) + s.N); })),
      out_("bench GEMM C", max_over(shapes_, [](const GemmShape& s) { return int64_t(s.M) * s.N; })) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> h(size_t(1) << 20);  // filled in pieces: no host copy of the whole pool
  for (int64_t at = 0; at < operands_.size(); at += int64_t(h.size())) {
    const int64_t n = std::min(int64_t(h.size()), operands_.size() - at);
    for (int64_t i = 0; i < n; ++i) h[size_t(i)] = u(rng);
    copy_to_device(h.data(), operands_.view(at, n));
  }
}

double GemmMix::flops() const {
  double f = 0;
  for (const GemmShape& s : shapes_) f += 2.0 * s.M * s.N * s.K * s.per_step;
  return f;
}

double GemmMix::seconds(int timed) const {
  double total = 0;
  for (const GemmShape& sh : shapes_) {
    const float* A = operands_.data();
    const float* B = A + int64_t(sh.M) * sh.K;
    const int lda = sh.ta == Trans::N ? sh.K : sh.M, ldb = sh.tb == Trans::N ? sh.N : sh.K;
    const auto call = [&] {
      gemm_as(prec_, sh.ta, sh.tb, sh.M, sh.N, sh.K, 1.0f, A, lda, B, ldb, sh.beta, out_.data(), sh.N);
      if (device_context()) to_host(out_, 1);  // the device's GEMM is asynchronous: wait for it
    };
    call();
    double best = 1e30;
    for (int r = 0; r < timed; ++r) {
      const double t0 = MPI_Wtime();
      call();
      best = std::min(best, MPI_Wtime() - t0);
    }
    total += best * sh.per_step;
  }
  return total;
}

}  // namespace zeropp
