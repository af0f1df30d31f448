#include "src/zero/qgz.hpp"

#include <algorithm>
#include <cstring>

#include "src/base/errors.hpp"
#include "src/zero/quant_scheme.hpp"

namespace zeropp {

namespace {
// e <- b·e + (1-b)·(x - deq), with x = g + e already formed by the caller.
void update_error(float* e, const float* x, const float* deq, int64_t n, float beta) {
  for (int64_t i = 0; i < n; ++i) e[i] = beta * e[i] + (1.0f - beta) * (x[i] - deq[i]);
}
}  // namespace

int64_t QgzReducer::intra_bytes(int64_t padded, int X, const QuantScheme& intra) {
  const int64_t chunk = padded / X;  // Y·s
  return X == 1 ? 0 : (X - 1) * intra.wire_bytes(chunk);
}

int64_t QgzReducer::inter_bytes(int64_t padded, int P, int X, const QuantScheme& inter) {
  const int Y = P / X;
  return (Y - 1) * inter.wire_bytes(padded / P);
}

QgzReducer::QgzReducer(const Topology& topo, Communicator& comm, const QgzSettings& s,
                       const std::vector<int64_t>& unit_padded)
    : topo_(topo),
      comm_(comm),
      s_(s),
      intra_{s.intra_bits, s.block, ScaleDType::F32},
      inter_{s.inter_bits, s.block, ScaleDType::F32},
      node_(Group::node(topo)),
      cross_(Group::cross(topo)),
      padded_(unit_padded) {
  int64_t max_padded = 0;
  for (int64_t n : padded_) {
    if (n % (int64_t(topo.P) * s.block) != 0)
      throw Error(
          "qgZ: a unit of " + std::to_string(n) +
          " elements is not padded to a multiple of P·block = " + std::to_string(int64_t(topo.P) * s.block));
    max_padded = std::max(max_padded, n);
  }
  const int64_t X = topo.X, chunk = max_padded / X;
  reordered_.resize(size_t(max_padded));
  sum_.resize(size_t(chunk));
  deq_.resize(size_t(max_padded));
  q1_.resize(size_t(intra_.payload_bytes(max_padded)));
  q1_recv_.resize(q1_.size());
  sc1_.resize(size_t(max_padded / s.block));
  sc1_recv_.resize(sc1_.size());
  q2_.resize(size_t(inter_.payload_bytes(chunk)));
  q2_recv_.resize(q2_.size());
  sc2_.resize(size_t(chunk / s.block));
  sc2_recv_.resize(sc2_.size());
  if (s.error_feedback)
    for (int64_t n : padded_) {
      e1_.emplace_back(size_t(n), 0.0f);
      e2_.emplace_back(size_t(n / X), 0.0f);
    }
}

void QgzReducer::reset_error_feedback() {
  for (auto* es : {&e1_, &e2_})
    for (auto& e : *es) std::fill(e.begin(), e.end(), 0.0f);
}

int64_t QgzReducer::memory_bytes() const {
  int64_t b = 0;
  for (const auto* es : {&e1_, &e2_})
    for (const auto& e : *es) b += int64_t(4 * e.size());
  b += int64_t(4 * (reordered_.size() + sum_.size() + deq_.size() + sc1_.size() + sc1_recv_.size() +
                    sc2_.size() + sc2_recv_.size()));
  b += int64_t(q1_.size() + q1_recv_.size() + q2_.size() + q2_recv_.size());
  return b;
}

void QgzReducer::reduce(int unit, const float* grad, float* out, const std::string& label) {
  const int P = topo_.P, X = topo_.X, Y = topo_.Y;
  const int64_t n = padded_[size_t(unit)], s = n / P, chunk = n / X, B = s_.block;
  const float beta = float(s_.beta);
  if (P == 1) {  // nothing to reduce: no quantization either
    std::memcpy(out, grad, size_t(s) * sizeof(float));
    return;
  }
  // 1. reorder: chunk x = [S_x, S_{X+x}, ...]: slice y·X + x at x·chunk + y·s.
  float* R = reordered_.data();
  for (int x = 0; x < X; ++x)
    for (int y = 0; y < Y; ++y)
      std::memcpy(R + x * chunk + y * s, grad + (int64_t(y) * X + x) * s, size_t(s) * sizeof(float));
  const auto with_feedback = [&](float* x, std::vector<float>& e, const QuantScheme& q_s, uint8_t* q,
                                 float* sc, int64_t m) {
    for (int64_t i = 0; i < m; ++i) x[i] += e[size_t(i)];
    q_s.quantize(x, q, sc, m);
    q_s.dequantize(q, sc, deq_.data(), m);
    update_error(e.data(), x, deq_.data(), m, beta);
  };
  // The hop-2 input: this rank's Y pieces, quantized in the inter-node scheme in q2_/sc2_.
  if (X == 1) {
    if (s_.error_feedback)
      with_feedback(R, e1_[size_t(unit)], inter_, q2_.data(), sc2_.data(), n);
    else
      inter_.quantize(R, q2_.data(), sc2_.data(), n);
  } else {
    if (s_.error_feedback)
      with_feedback(R, e1_[size_t(unit)], intra_, q1_.data(), sc1_.data(), n);
    else
      intra_.quantize(R, q1_.data(), sc1_.data(), n);
    // 2. intra-node all-to-all: chunk x to local rank x.
    comm_.alltoall(node_, q1_.data(), q1_recv_.data(), intra_.payload_bytes(chunk), DType::I8,
                   Purpose::GradReduce, label);
    comm_.alltoall(node_, sc1_.data(), sc1_recv_.data(), chunk / B, DType::F32, Purpose::GradReduce, label);
    if (Y == 1) {  // one node: the sum is final
      intra_.dequantize_sum(q1_recv_.data(), sc1_recv_.data(), X, out, chunk);
      return;
    }
    // 3. dequantize the X chunks, sum in fp32, requantize in the inter-node scheme.
    if (s_.error_feedback) {
      intra_.dequantize_sum(q1_recv_.data(), sc1_recv_.data(), X, sum_.data(), chunk);
      with_feedback(sum_.data(), e2_[size_t(unit)], inter_, q2_.data(), sc2_.data(), chunk);
    } else {
      intra_.dequant_sum_requant(q1_recv_.data(), sc1_recv_.data(), X, inter_, q2_.data(), sc2_.data(),
                                 chunk);
    }
  }
  // 4. cross-node all-to-all: piece y to node y (the owner y·X + x).
  comm_.alltoall(cross_, q2_.data(), q2_recv_.data(), inter_.payload_bytes(s), DType::I8, Purpose::GradReduce,
                 label);
  comm_.alltoall(cross_, sc2_.data(), sc2_recv_.data(), s / B, DType::F32, Purpose::GradReduce, label);
  // 5. dequantize the Y pieces and sum in fp32.
  inter_.dequantize_sum(q2_recv_.data(), sc2_recv_.data(), Y, out, s);
}

}  // namespace zeropp
