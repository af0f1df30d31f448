// A reference model of qgZ (src/zero/qgz.hpp's steps 1-5) for every rank at
// once, in plain loops with the reference quantizers of kernels/quant/quant_ref.hpp:
// given every rank's padded gradient of a unit, what every owner must receive,
// bit for bit (the kernels equal these references bit for bit, and qgZ sums
// the X chunks in local-rank order and the Y pieces in node order).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/quant/quant_ref.hpp"
#include "src/comm/topology.hpp"
#include "src/zero/qgz.hpp"

namespace zeropp::test {

using Vecs = std::vector<std::vector<float>>;

// Quantize and dequantize x at `bits` with the reference quantizer.
inline std::vector<float> round_trip(int bits, const std::vector<float>& x, int64_t block) {
  const int64_t n = int64_t(x.size());
  std::vector<float> d(x.size()), scales(size_t(n / block));
  std::vector<uint8_t> q(static_cast<size_t>(n));
  if (bits == 8) {
    auto* q8 = reinterpret_cast<int8_t*>(q.data());
    quant_ref::quantize<8>(x.data(), q8, scales.data(), n, block);
    quant_ref::dequantize<8, false>(q8, scales.data(), d.data(), n, block);
  } else {
    quant_ref::quantize<4>(x.data(), q.data(), scales.data(), n, block);
    quant_ref::dequantize<4, false>(q.data(), scales.data(), d.data(), n, block);
  }
  return d;
}

// The whole qgZ of one unit for all P ranks (src/zero/qgz.hpp's steps 1-5).
struct QgzModel {
  int P, X, Y, bits, inter_bits;
  int64_t n, block;
  bool ef;
  float beta;
  Vecs e1, e2;  // per rank: hop 1 (n, chunk order), hop 2 (n/X)

  QgzModel(const Topology& t, const QgzSettings& s, int64_t padded)
      : P(t.P),
        X(t.X),
        Y(t.Y),
        bits(s.intra_bits),
        inter_bits(s.inter_bits),
        n(padded),
        block(s.block),
        ef(s.error_feedback),
        beta(float(s.beta)) {
    if (ef) {
      e1.assign(size_t(P), std::vector<float>(size_t(n), 0.0f));
      e2.assign(size_t(P), std::vector<float>(size_t(n / X), 0.0f));
    }
  }

  // What one sender puts on the wire, dequantized: Q(x + e), and e updated.
  std::vector<float> send(int b, std::vector<float> x, std::vector<float>* e) const {
    if (e)
      for (size_t i = 0; i < x.size(); ++i) x[i] += (*e)[i];
    const std::vector<float> d = round_trip(b, x, block);
    if (e)
      for (size_t i = 0; i < x.size(); ++i) (*e)[i] = beta * (*e)[i] + (1.0f - beta) * (x[i] - d[i]);
    return d;
  }

  // grads[q]: rank q's padded gradient; returns every rank's reduced slice.
  Vecs reduce(const Vecs& grads) {
    const int64_t s = n / P, chunk = n / X;
    Vecs out(size_t(P), std::vector<float>(size_t(s), 0.0f));
    if (P == 1) {
      std::copy(grads[0].begin(), grads[0].begin() + s, out[0].begin());
      return out;
    }
    // step 1: reorder and the first quantization (straight in hop 2's format when X = 1)
    Vecs sent(static_cast<size_t>(P));
    for (int q = 0; q < P; ++q) {
      std::vector<float> r(static_cast<size_t>(n));
      quant_ref::qgz_reorder(grads[size_t(q)].data(), r.data(), n, X, Y);
      sent[size_t(q)] = send(X == 1 ? inter_bits : bits, r, ef ? &e1[size_t(q)] : nullptr);
    }
    // steps 2-3: rank (a, c) sums chunk c of its node's X ranks, in local order,
    // and quantizes the sum in hop 2's format
    Vecs hop2 = sent;
    if (X > 1) {
      for (int a = 0; a < Y; ++a)
        for (int c = 0; c < X; ++c) {
          std::vector<float> sum(static_cast<size_t>(chunk));
          for (int b = 0; b < X; ++b)
            for (int64_t j = 0; j < chunk; ++j) {
              const float v = sent[size_t(a * X + b)][size_t(c * chunk + j)];
              sum[size_t(j)] = b == 0 ? v : sum[size_t(j)] + v;
            }
          if (Y == 1) {
            out[size_t(c)] = sum;
            continue;
          }
          hop2[size_t(a * X + c)] = send(inter_bits, sum, ef ? &e2[size_t(a * X + c)] : nullptr);
        }
      if (Y == 1) return out;
    }
    // steps 4-5: owner (y, c) sums piece y of rank (a, c) over the nodes a, in node order
    for (int y = 0; y < Y; ++y)
      for (int c = 0; c < X; ++c)
        for (int a = 0; a < Y; ++a)
          for (int64_t i = 0; i < s; ++i) {
            const float v = hop2[size_t(a * X + c)][size_t(y * s + i)];
            float& o = out[size_t(y * X + c)][size_t(i)];
            o = a == 0 ? v : o + v;
          }
    return out;
  }
};

}  // namespace zeropp::test
