// QgzReducer::reduce element by element. Every rank builds every rank's
// gradient (a pure function of rank, unit, call and element), so each rank can
// run the whole two-hop qgZ for all P ranks in the reference model
// (core/qgz_model.hpp) and compare its own slice, and its error-feedback
// buffers, bit for bit.
#include <mpi.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "src/comm/mpi/mpi_communicator.hpp"
#include "src/comm/topology.hpp"
#include "src/zero/qgz.hpp"
#include "src/zero/shard.hpp"
#include "zero/engine_fixture.hpp"
#include "zero/qgz_model.hpp"

using namespace zeropp;
using namespace zeropp::test;

namespace {

uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Rank q's padded gradient of one unit at call `call`: zero in the padding;
// otherwise uniform in (-1, 1) times 2^k with k in [-4, 4] per (rank, block),
// so the blocks of one slice, and the ranks summed into it, differ in scale.
std::vector<float> random_grad(int q, int unit, int call, int64_t numel, int64_t padded, int64_t block) {
  std::vector<float> g(size_t(padded), 0.0f);
  const uint64_t key = (uint64_t(q) << 40) ^ (uint64_t(unit) << 32) ^ (uint64_t(call) << 24);
  for (int64_t i = 0; i < numel; ++i) {
    const int k = int(mix(key ^ uint64_t(i / block) ^ 0x5555) % 9) - 4;
    const double u = double(mix(key ^ (uint64_t(i) << 1) ^ 1) >> 11) / double(1ull << 53);  // [0, 1)
    g[size_t(i)] = std::ldexp(float(2 * u - 1), k);
  }
  return g;
}

// A gradient that both quantizers represent exactly: sign(q)·p(i) with p
// integer in [-7, 7] and p = 7 at the first element of every block (scale 1
// for every rank's block, scale |sum of signs| after the intra-node sum,
// which is 0, 1, 2 or 4 for the X used here: powers of two, so exact too).
int rank_sign(int q) { return q % 3 == 2 ? -1 : 1; }
int pattern(int64_t i, int64_t block) { return i % block == 0 ? 7 : int(mix(uint64_t(i)) % 15) - 7; }
std::vector<float> exact_grad(int q, int64_t numel, int64_t padded, int64_t block) {
  std::vector<float> g(size_t(padded), 0.0f);
  for (int64_t i = 0; i < numel; ++i) g[size_t(i)] = float(rank_sign(q) * pattern(i, block));
  return g;
}

// Number of elements where a and b differ as floats (the first one in INFO).
int64_t mismatches(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  int64_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (!(got[i] == want[i])) {
      if (bad == 0) UNSCOPED_INFO(what << " element " << i << ": got " << got[i] << ", want " << want[i]);
      ++bad;
    }
  return bad;
}

std::string describe(const Topology& t, const QgzSettings& s) {
  return "P=" + std::to_string(t.P) + " X=" + std::to_string(t.X) + " Y=" + std::to_string(t.Y) +
         " block=" + std::to_string(s.block) + " int" + std::to_string(s.intra_bits) + "/int" +
         std::to_string(s.inter_bits) + (s.error_feedback ? " +EF" : "") + " rank " + std::to_string(t.rank);
}

// Units whose real content fills no slice evenly: several blocks and a
// half-block tail, one short of a multiple of P·block, and 7 elements
// (every rank but 0 owns pure padding).
std::vector<int64_t> unit_sizes(int P, int64_t block) {
  return {3 * P * block + block / 2 + 1, 2 * P * block - 1, 7};
}

}  // namespace

TEST_CASE(
    "QgzReducer::reduce delivers, element by element, the two-hop quantized sum of every rank's slice, "
    "sending the closed-form bytes",
    "[qgz]") {
  const int P = world_size(), r = world_rank();
  MpiCommunicator comm(r);
  for (int X = 1; X <= P; X *= 2) {
    Topology t(X);
    for (int64_t block : {8, 32})
      for (const auto& [bits, inter] : {std::pair{4, 4}, {8, 4}, {4, 8}})
        for (bool ef : {false, true}) {
          QgzSettings s;
          s.block = block;
          s.intra_bits = bits;
          s.inter_bits = inter;
          s.error_feedback = ef;
          s.beta = 0.75;
          const std::vector<int64_t> numel = unit_sizes(P, block);
          std::vector<int64_t> padded;
          for (int64_t m : numel) padded.push_back(padded_size(m, P, block));
          QgzReducer reducer(t, comm, s, padded);
          std::vector<QgzModel> model;
          for (int64_t n : padded) model.emplace_back(t, s, n);
          // two calls: the second starts from the error feedback the first left
          for (int call = 0; call < 2; ++call)
            for (int u = 0; u < int(padded.size()); ++u) {
              const int64_t n = padded[size_t(u)], sl = n / P;
              Vecs grads;
              for (int q = 0; q < P; ++q)
                grads.push_back(random_grad(q, u, call, numel[size_t(u)], n, block));
              std::vector<float> out(size_t(sl), -1.0f);
              comm.counters().reset();
              reducer.reduce(u, grads[size_t(r)].data(), out.data(), "unit " + std::to_string(u));
              const ByteCounters::Bytes sent = comm.counters().of(Purpose::GradReduce);
              const Vecs want = model[size_t(u)].reduce(grads);
              INFO(describe(t, s) << " unit " << u << " (" << numel[size_t(u)] << " of " << n
                                  << " elements) call " << call);
              CHECK(mismatches(out, want[size_t(r)], "reduced slice") == 0);
              CHECK(sent.intra == QgzReducer::intra_bytes(n, X, {bits, block, ScaleDType::F32}));
              CHECK(sent.inter == QgzReducer::inter_bytes(n, P, X, {inter, block, ScaleDType::F32}));
              int64_t dirty_padding = 0;  // padding stays exactly zero, whatever the model says
              for (int64_t i = std::max(numel[size_t(u)], r * sl); i < (r + 1) * sl; ++i)
                dirty_padding += out[size_t(i - r * sl)] != 0.0f;
              CHECK(dirty_padding == 0);
              if (ef && P > 1) {
                CHECK(mismatches(to_host(reducer.hop1_error(u)), model[size_t(u)].e1[size_t(r)],
                                 "hop-1 error") == 0);
                CHECK(mismatches(to_host(reducer.hop2_error(u)), model[size_t(u)].e2[size_t(r)],
                                 "hop-2 error") == 0);
              }
            }
        }
  }
}

TEST_CASE("QgzReducer::reduce returns the exact sum when every hop's values are representable", "[qgz]") {
  const int P = world_size(), r = world_rank();
  MpiCommunicator comm(r);
  for (int X = 1; X <= P; X *= 2) {
    Topology t(X);
    for (bool ef : {false, true}) {  // exact sends leave zero error to feed back
      QgzSettings s;
      s.block = 16;
      s.error_feedback = ef;
      const std::vector<int64_t> numel = unit_sizes(P, s.block);
      std::vector<int64_t> padded;
      for (int64_t m : numel) padded.push_back(padded_size(m, P, s.block));
      QgzReducer reducer(t, comm, s, padded);
      int sign_sum = 0;
      for (int q = 0; q < P; ++q) sign_sum += rank_sign(q);
      for (int u = 0; u < int(padded.size()); ++u) {
        const int64_t n = padded[size_t(u)], sl = n / P;
        const std::vector<float> g = exact_grad(r, numel[size_t(u)], n, s.block);
        std::vector<float> out(size_t(sl), -1.0f), want(size_t(sl), 0.0f);
        reducer.reduce(u, g.data(), out.data(), "unit " + std::to_string(u));
        for (int64_t i = r * sl; i < std::min((r + 1) * sl, numel[size_t(u)]); ++i)
          want[size_t(i - r * sl)] = float(sign_sum * pattern(i, s.block));
        INFO(describe(t, s) << " unit " << u);
        CHECK(mismatches(out, want, "exact sum") == 0);
      }
    }
  }
}

TEST_CASE("int8 across nodes (zero.inter_node_gradient_bits = 8) brings qgZ's sum closer to the exact one",
          "[qgz]") {
  const int P = world_size(), r = world_rank();
  if (P < 2) return;  // one rank: nothing is quantized (the first test case covers P = 1)
  MpiCommunicator comm(r);
  for (int X : {1, P / 2}) {  // every hop-2 route: straight (X = 1) and after the intra-node sum
    Topology t(X);
    const int64_t block = 32, numel = 4 * P * block, sl = numel / P;
    double err2[2] = {0, 0}, ref2 = 0;
    for (int k = 0; k < 2; ++k) {
      QgzSettings s;
      s.block = block;
      s.intra_bits = 8;  // so that hop 2's format dominates the error
      s.inter_bits = k == 0 ? 4 : 8;
      QgzReducer reducer(t, comm, s, {numel});
      std::vector<double> exact(static_cast<size_t>(sl), 0.0);
      for (int q = 0; q < P; ++q) {
        const std::vector<float> g = random_grad(q, 0, 0, numel, numel, block);
        for (int64_t i = 0; i < sl; ++i) exact[size_t(i)] += double(g[size_t(r * sl + i)]);
      }
      const std::vector<float> g = random_grad(r, 0, 0, numel, numel, block);
      std::vector<float> out(static_cast<size_t>(sl));
      reducer.reduce(0, g.data(), out.data(), "accuracy");
      ref2 = 0;
      for (int64_t i = 0; i < sl; ++i) {
        const double e = double(out[size_t(i)]) - exact[size_t(i)];
        err2[k] += e * e;
        ref2 += exact[size_t(i)] * exact[size_t(i)];
      }
    }
    INFO("P=" << P << " X=" << X << " rank " << r << ": squared error int4 " << err2[0] << ", int8 "
              << err2[1] << " of " << ref2);
    // int8's step is 7/127 of int4's: the squared error shrinks ~300x; ask for 30x
    CHECK(err2[1] * 30 < err2[0]);
    CHECK(err2[1] < ref2 * 1e-4);
  }
}
