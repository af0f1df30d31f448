#include "src/zero/qgz.hpp"

#include <algorithm>

#include "kernels/quant/error_feedback.hpp"
#include "kernels/quant/qgz_reorder.hpp"
#include "src/base/errors.hpp"
#include "src/zero/quant_scheme.hpp"

namespace zeropp {

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
  for (int64_t n : padded_)
    if (n % (int64_t(topo.P) * s.block) != 0)
      throw Error(
          "qgZ: a unit of " + std::to_string(n) +
          " elements is not padded to a multiple of P·block = " + std::to_string(int64_t(topo.P) * s.block));
  const QgzBuffers b = qgz_buffers(padded_, topo.X, s);
  reordered_ = Buffer<float>("qgZ reordered", b.max_padded);
  sum_ = Buffer<float>("qgZ sum", b.chunk);
  deq_ = Buffer<float>("qgZ dequantized", b.max_padded);
  q1_ = Buffer<uint8_t>("qgZ hop 1", b.hop1_bytes);
  q1_recv_ = Buffer<uint8_t>("qgZ hop 1 recv", b.hop1_bytes);
  sc1_ = Buffer<float>("qgZ hop 1 scales", b.hop1_scales);
  sc1_recv_ = Buffer<float>("qgZ hop 1 scales recv", b.hop1_scales);
  q2_ = Buffer<uint8_t>("qgZ hop 2", b.hop2_bytes);
  q2_recv_ = Buffer<uint8_t>("qgZ hop 2 recv", b.hop2_bytes);
  sc2_ = Buffer<float>("qgZ hop 2 scales", b.hop2_scales);
  sc2_recv_ = Buffer<float>("qgZ hop 2 scales recv", b.hop2_scales);
  for (size_t u = 0; u < b.error1.size(); ++u) {
    e1_.emplace_back("qgZ hop 1 error", b.error1[u]);
    e2_.emplace_back("qgZ hop 2 error", b.error2[u]);
  }
}

QgzBuffers qgz_buffers(const std::vector<int64_t>& padded, int X, const QgzSettings& s) {
  QgzBuffers b;
  for (int64_t n : padded) b.max_padded = std::max(b.max_padded, n);
  b.chunk = b.max_padded / X;
  b.hop1_bytes = QuantScheme{s.intra_bits, s.block, ScaleDType::F32}.payload_bytes(b.max_padded);
  b.hop2_bytes = QuantScheme{s.inter_bits, s.block, ScaleDType::F32}.payload_bytes(b.chunk);
  b.hop1_scales = b.max_padded / s.block;
  b.hop2_scales = b.chunk / s.block;
  if (s.error_feedback)
    for (int64_t n : padded) {
      b.error1.push_back(n);
      b.error2.push_back(n / X);
    }
  return b;
}

int64_t QgzBuffers::error_feedback_bytes() const {
  int64_t n = 0;
  for (size_t u = 0; u < error1.size(); ++u) n += error1[u] + error2[u];
  return 4 * n;
}

int64_t QgzBuffers::bytes() const {
  return 4 * (2 * max_padded + chunk + 2 * hop1_scales + 2 * hop2_scales) + 2 * (hop1_bytes + hop2_bytes) +
         error_feedback_bytes();
}

void QgzReducer::reset_error_feedback() {
  for (auto* es : {&e1_, &e2_})
    for (auto& e : *es) fill(e, 0.0f);
}

int64_t QgzReducer::memory_bytes() const {
  int64_t b = 0;
  for (const auto* es : {&e1_, &e2_})
    for (const auto& e : *es) b += e.bytes();
  for (const Buffer<float>* f : {&reordered_, &sum_, &deq_, &sc1_, &sc1_recv_, &sc2_, &sc2_recv_})
    b += f->bytes();
  for (const Buffer<uint8_t>* q : {&q1_, &q1_recv_, &q2_, &q2_recv_}) b += q->bytes();
  return b;
}

void QgzReducer::reduce(int unit, const float* grad, float* out, const std::string& label) {
  start(unit, grad, out, label);
  finish();
}

// The error-feedback step of one hop: x += e; quantize; e <- b·e + (1-b)(x - deq(Q(x))).
void QgzReducer::quantize_with_feedback(float* x, const Buffer<float>& e, const QuantScheme& q_s, uint8_t* q,
                                        float* sc, int64_t m) {
  add_error(Vec<float>(x, m), e.view(0, m), m);
  q_s.quantize(x, q, sc, m);
  q_s.dequantize(q, sc, deq_.data(), m);
  update_error(e.view(0, m), CVec<float>(x, m), deq_.view(0, m), float(s_.beta), m);
}

void QgzReducer::start(int unit, const float* grad, float* out, const std::string& label) {
  if (cur_.hop != 0)
    fatal("QgzReducer::start", __FILE__, __LINE__, "unit '" + label + "' started while another is in flight");
  const int P = topo_.P, X = topo_.X;
  const int64_t n = padded_[size_t(unit)], s = n / P;
  if (P == 1) {  // nothing to reduce: no quantization either
    copy(Vec<float>(out, s), CVec<float>(grad, s));
    return;
  }
  cur_.unit = unit;
  cur_.out = out;
  cur_.label = label;
  // One rank per node: the hop-2 input (this rank's Y pieces) quantized straight in q2_/sc2_.
  const bool straight = X == 1;
  const QuantScheme& q_s = straight ? inter_ : intra_;
  uint8_t* q = straight ? q2_.data() : q1_.data();
  float* sc = straight ? sc2_.data() : sc1_.data();
  // 1. reorder: chunk x = [S_x, S_{X+x}, ...]: slice y·X + x at x·chunk + y·s; without
  // error feedback (which adds its error to the reordered copy) fused into the quantization.
  if (s_.error_feedback) {
    qgz_reorder(CVec<float>(grad, n), reordered_.view(0, n), n, X, topo_.Y);
    quantize_with_feedback(reordered_.data(), e1_[size_t(unit)], q_s, q, sc, n);
  } else {
    q_s.quantize_reordered(grad, q, sc, n, X, topo_.Y);
  }
  start_hop(straight ? 2 : 1);
}

void QgzReducer::start_hop(int hop) {
  const int64_t n = padded_[size_t(cur_.unit)], B = s_.block;
  cur_.hop = hop;
  with_device_access([&] {
    if (hop == 1) {  // 2. intra-node all-to-all: chunk x to local rank x.
      const int64_t chunk = n / topo_.X;
      cur_.payload = comm_.start_alltoall(node_, q1_.data(), q1_recv_.data(), intra_.payload_bytes(chunk),
                                          DType::I8, Purpose::GradReduce, cur_.label);
      cur_.scales = comm_.start_alltoall(node_, sc1_.data(), sc1_recv_.data(), chunk / B, DType::F32,
                                         Purpose::GradReduce, cur_.label);
    } else {  // 4. cross-node all-to-all: piece y to node y (the owner y·X + x).
      const int64_t s = n / topo_.P;
      cur_.payload = comm_.start_alltoall(cross_, q2_.data(), q2_recv_.data(), inter_.payload_bytes(s),
                                          DType::I8, Purpose::GradReduce, cur_.label);
      cur_.scales = comm_.start_alltoall(cross_, sc2_.data(), sc2_recv_.data(), s / B, DType::F32,
                                         Purpose::GradReduce, cur_.label);
    }
  });
}

void QgzReducer::after_hop() {
  const int X = topo_.X, Y = topo_.Y;
  const int64_t n = padded_[size_t(cur_.unit)], s = n / topo_.P, chunk = n / X;
  if (cur_.hop == 2) {  // 5. dequantize the Y pieces and sum in fp32.
    inter_.dequantize_sum(q2_recv_.data(), sc2_recv_.data(), Y, cur_.out, s);
    cur_.hop = 0;
    return;
  }
  if (Y == 1) {  // one node: the sum is final
    intra_.dequantize_sum(q1_recv_.data(), sc1_recv_.data(), X, cur_.out, chunk);
    cur_.hop = 0;
    return;
  }
  // 3. dequantize the X chunks, sum in fp32, requantize in the inter-node scheme.
  if (s_.error_feedback) {
    intra_.dequantize_sum(q1_recv_.data(), sc1_recv_.data(), X, sum_.data(), chunk);
    quantize_with_feedback(sum_.data(), e2_[size_t(cur_.unit)], inter_, q2_.data(), sc2_.data(), chunk);
  } else {
    intra_.dequant_sum_requant(q1_recv_.data(), sc1_recv_.data(), X, inter_, q2_.data(), sc2_.data(), chunk);
  }
  start_hop(2);
}

bool QgzReducer::test() {
  while (cur_.hop != 0) {
    const bool done = with_device_access([&] {
      const bool a = comm_.test(cur_.payload);
      return comm_.test(cur_.scales) && a;
    });
    if (!done) return false;
    after_hop();
  }
  return true;
}

void QgzReducer::finish() {
  while (cur_.hop != 0) {
    with_device_access([&] {
      comm_.wait(cur_.payload);
      comm_.wait(cur_.scales);
    });
    after_hop();
  }
}

}  // namespace zeropp
