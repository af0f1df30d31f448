// The inference weight sources (src/zero/inference_weights.hpp): the weights
// each hands the model against the master weights, the bytes of every
// acquire and of refresh() against their closed forms, and the memory each
// holds; at every node layout X of P ranks (2 emulated nodes x 2 on 4); and
// generation through each equals one rank's with the full weights.
#include <catch2/catch.hpp>
#include <cmath>

#include "models/full_weights.hpp"
#include "src/base/bf16.hpp"
#include "src/base/errors.hpp"
#include "src/generate/generate.hpp"
#include "src/zero/inference_weights.hpp"
#include "zero/engine_fixture.hpp"

using namespace zeropp;
using namespace zeropp::test;

namespace zeropp {  // for Catch's comparisons (found by argument-dependent lookup)
bool operator==(const ByteCounters::Bytes& a, const ByteCounters::Bytes& b) {
  return a.intra == b.intra && a.inter == b.inter;
}
std::ostream& operator<<(std::ostream& os, const ByteCounters::Bytes& b) {
  return os << "{intra " << b.intra << ", inter " << b.inter << "}";
}
}  // namespace zeropp

namespace {

constexpr int64_t kBlock = 32;

// The bytes this rank sends in one all-gather of `bytes` per member over the
// world ring (only the node's last rank sends across nodes) or inside its
// hpZ group of alpha ranks (inside the node).
ByteCounters::Bytes ring(const Topology& t, int64_t bytes) {
  ByteCounters::Bytes b;
  (t.Y > 1 && t.local == t.X - 1 ? b.inter : b.intra) += (t.P - 1) * bytes;
  return b;
}
ByteCounters::Bytes group(int alpha, int64_t bytes) { return {(alpha - 1) * bytes, 0}; }

struct Expect {
  ByteCounters::Bytes refresh, acquire;  // per unit
  int64_t held = 0;
};

Expect closed_form(const std::string& mode, const Topology& t, int alpha, int64_t padded, int64_t wb) {
  const int64_t slice = padded / t.P, k = t.P / alpha;
  const QuantScheme q{mode.back() == '8' ? 8 : 4, kBlock, ScaleDType::F32};
  const int64_t chunk = q.packed_bytes((slice + kBlock - 1) / kBlock * kBlock);
  Expect e;
  if (mode == "zero3") {
    e.acquire = ring(t, slice * wb);
  } else if (mode == "full") {
    e.refresh = ring(t, slice * wb);
    e.held = padded * 4;
  } else if (mode == "hpz") {
    e.refresh = ring(t, slice * wb);
    e.acquire = group(alpha, padded / alpha * wb);
    e.held = padded / alpha * wb;
  } else if (mode == "int8" || mode == "int4") {
    e.refresh = ring(t, chunk);
    e.held = t.P * chunk;
  } else {  // hpz+int8, hpz+int4
    e.refresh = ring(t, chunk);
    e.acquire = group(alpha, k * chunk);
    e.held = k * chunk;
  }
  return e;
}

// |w - m| <= the largest half step of the quantization over the unit
// (every block's scale is at most max|m| / Qmax).
double quant_bound(const std::vector<float>& m, int bits) {
  float mx = 0;
  for (float x : m) mx = std::max(mx, std::abs(x));
  return double(mx) / (bits == 8 ? 127 : 7) * 0.5 * (1 + 1e-5);
}

}  // namespace

TEST_CASE("inference weight sources: weights, bytes per acquire and refresh, memory", "[inference-weights]") {
  const int P = world_size();
  for (int X = 1; X <= P; X *= 2) {
    if (P % X) continue;
    for (const std::string dtype : {"fp32", "bf16"}) {
      const int64_t wb = dtype == "fp32" ? 4 : 2;
      // the weights of the int modes, which their hpZ twins must reproduce bit for bit
      std::vector<std::vector<float>> int_weights[2];
      for (const auto& source : deck_names(WeightSource{})) {
        const std::string mode = source.name;
        Config cfg = tiny(1, dtype);
        cfg.zero.ranks_per_node = X;
        cfg.zero.weight_block = kBlock;
        cfg.zero.inference_weights = source.value;
        Run run(cfg);
        const Topology& t = run.topo;
        const auto sched = run.model->unit_schedule(Pass::Forward);
        std::vector<std::vector<float>> master;
        for (size_t u = 0; u < run.model->layout().units.size(); ++u)
          master.push_back(run.engine.gather_master(int(u)));
        auto src = run.engine.inference_weights();
        const int alpha = src->group_size();
        INFO("P=" << P << " X=" << X << " " << dtype << " " << mode << " alpha=" << alpha);
        CHECK(alpha == (mode.rfind("hpz", 0) == 0 ? X : 1));
        ByteCounters& c = run.comm->counters();

        c.reset();
        src->refresh();
        ByteCounters::Bytes refresh;
        int64_t held = 0;
        for (size_t u = 0; u < master.size(); ++u) {
          const Expect e = closed_form(mode, t, alpha, run.engine.padded(int(u)), wb);
          refresh += e.refresh;
          held += e.held;
        }
        CHECK(c.at(Kind::AllGather, Purpose::Other) == refresh);
        CHECK(c.total() == refresh);
        CHECK(src->copy_bytes() == held);

        const bool quant = mode.find("int") != std::string::npos;
        const int bits = mode.back() == '8' ? 8 : 4;
        std::vector<std::vector<float>> seen(master.size());
        double max_err = 0;
        for (int pass = 0; pass < 2; ++pass) {  // the second pass starts from the first's state
          c.reset();
          ByteCounters::Bytes done, next;  // the gathers of units acquired so far; and the next's
          for (size_t i = 0; i < sched.size(); ++i) {
            const int u = sched[i];
            const CVec<float> w = src->acquire(u);
            // this unit's gather is complete; the next one's is in flight (its hops counted as they go)
            done += closed_form(mode, t, alpha, run.engine.padded(u), wb).acquire;
            next = done;
            if (i + 1 < sched.size())
              next += closed_form(mode, t, alpha, run.engine.padded(sched[i + 1]), wb).acquire;
            const ByteCounters::Bytes now = c.at(Kind::AllGather, Purpose::FwdGather);
            CHECK(now.intra >= done.intra);
            CHECK(now.inter >= done.inter);
            CHECK(now.intra <= next.intra);
            CHECK(now.inter <= next.inter);
            std::vector<float> h(size_t(w.size()));
            copy_to_host(w, h.data());
            src->release(u);
            const std::vector<float>& m = master[size_t(u)];
            REQUIRE(h.size() == m.size());
            if (quant) {
              double err = 0;
              for (size_t k = 0; k < m.size(); ++k) err = std::max(err, double(std::abs(h[k] - m[k])));
              CHECK(err <= quant_bound(m, bits));
              max_err = std::max(max_err, err);
            } else {
              std::vector<float> r = m;
              if (dtype == "bf16") round_to_bf16(r.data(), int64_t(r.size()));
              CHECK(h == r);
            }
            if (!seen[size_t(u)].empty()) CHECK(h == seen[size_t(u)]);  // every use the same
            seen[size_t(u)] = h;
          }
          CHECK(c.at(Kind::AllGather, Purpose::FwdGather) == done);  // a pass's gathers: all complete
          CHECK(c.total() == done);
          if (quant) CHECK(max_err > 0);  // quantized, not the master weights
        }
        if (quant) {
          auto& ref = int_weights[bits == 8 ? 0 : 1];
          if (ref.empty())
            ref = seen;
          else
            CHECK(seen == ref);
        }
      }
    }
  }
}

TEST_CASE("zero.inference_weights: each source's route; an unknown spelling has none",
          "[inference-weights]") {
  CHECK(inference_route(WeightSource::HpzInt4).group);
  CHECK(inference_route(WeightSource::HpzInt4).bits == 4);
  CHECK(inference_route(WeightSource::Zero3).bits == 0);
  CHECK(inference_route(WeightSource::Full).full);
  CHECK(deck_value<WeightSource>("hpz+int8") == WeightSource::HpzInt8);
  CHECK(!deck_value<WeightSource>("int2"));
}

TEST_CASE("inference weight sources: generation on P ranks equals one rank with the full weights",
          "[inference-weights]") {
  const int P = world_size();
  const std::vector<std::vector<int32_t>> prompts = {{5, 9, 1}, {7, 2}};
  for (int X = 1; X <= P; X *= 2) {
    if (P % X) continue;
    for (const auto& source : deck_names(WeightSource{})) {
      const std::string mode = source.name;
      Config c = tiny(1, "fp32");
      c.train.batch_size = 2;
      c.zero.ranks_per_node = X;
      c.zero.weight_block = kBlock;
      c.zero.inference_weights = source.value;
      Run run(c);
      INFO("P=" << P << " X=" << X << " " << mode);
      const auto ref_model = make_model<float>(c.model, 2, c.train.seq_len);
      FullWeights<float> full(*ref_model, uint64_t(c.train.seed));
      auto src = run.engine.inference_weights();
      src->refresh();
      const auto gen = [&](Model<float>& m, UnitSource<float>& s) {
        CoinStream coins(1);
        const PassRunner pass = [&](const std::function<void(UnitSource<float>&)>& f) { f(s); };
        return generate(m, pass, prompts, 10, SamplingRule{0.0, 0, 1.0}, coins, [](int, int32_t) {});
      };
      const auto got = gen(*run.model, *src);
      // every rank generated the same tokens (rank 0's, broadcast)
      std::vector<int32_t> mine, root;
      for (const auto& g : got) mine.insert(mine.end(), g.begin(), g.end());
      root = mine;
      ZCHECK_MPI(MPI_Bcast(root.data(), int(root.size()), MPI_INT32_T, 0, MPI_COMM_WORLD));
      CHECK(mine == root);
      // zero3 and hpz hand the model exactly the fp32 master weights (quantized copies: close, not equal)
      if (mode == "zero3" || mode == "hpz") CHECK(got == gen(*ref_model, full));
    }
  }
}
