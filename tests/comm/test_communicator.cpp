// Collectives over world/node/cross groups of emulated layouts: exact results
// versus a direct computation, and byte counters versus the closed forms of
// src/comm/communicator.hpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "src/base/bf16.hpp"
#include "src/comm/communicator.hpp"

using namespace zeropp;

namespace {

int world_size() {
  int p = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

// Every X in {1, 2, 4} that divides P.
std::vector<int> layouts() {
  std::vector<int> xs;
  for (int x : {1, 2, 4})
    if (world_size() % x == 0) xs.push_back(x);
  return xs;
}

// Member m's input: a function of (m, i) so every rank can compute expectations.
float value(int m, int64_t i) {
  uint64_t z = uint64_t(m) * 0x9e3779b97f4a7c15ull + uint64_t(i) * 0xbf58476d1ce4e5b9ull;  // splitmix64
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return float(int64_t(z >> 40) - (int64_t(1) << 23)) / float(1 << 23);  // in [-1, 1)
}

// Closed form of a ring collective: (p-1)·b to the next member, inter when it is on another node.
using Bytes = ByteCounters::Bytes;
Bytes ring_bytes(const Group& g, int64_t b) {
  const int64_t sent = int64_t(g.size() - 1) * b;
  const bool crosses = g.size() > 1 && !g.same_node((g.rank() + 1) % g.size());
  return crosses ? Bytes{0, sent} : Bytes{sent, 0};
}

std::vector<Group> groups(const Topology& t) {
  std::vector<Group> gs;
  gs.push_back(Group::world(t));
  gs.push_back(Group::node(t));
  gs.push_back(Group::cross(t));
  return gs;
}

}  // namespace

TEST_CASE("groups know their members' world ranks and nodes", "[comm]") {
  for (int X : layouts()) {
    Topology t(X);
    Group w = Group::world(t), n = Group::node(t), c = Group::cross(t);
    REQUIRE(w.size() == t.P);
    REQUIRE(n.size() == t.X);
    REQUIRE(c.size() == t.Y);
    CHECK(w.rank() == t.rank);
    CHECK(n.rank() == t.local);
    CHECK(c.rank() == t.node);
    for (int m = 0; m < t.P; ++m) {
      CHECK(w.world_rank(m) == m);
      CHECK(w.same_node(m) == (m / X == t.node));
    }
    for (int m = 0; m < t.X; ++m) CHECK(n.world_rank(m) == t.node * X + m);
    for (int m = 0; m < t.Y; ++m) {
      CHECK(c.world_rank(m) == m * X + t.local);
      CHECK(c.same_node(m) == (m == t.node));
    }
    // An arbitrary group (hpZ-like pairs of consecutive ranks).
    Group pairs(t, t.rank / 2, t.rank % 2, "pairs");
    CHECK(pairs.name() == "pairs");
    for (int m = 0; m < pairs.size(); ++m) CHECK(pairs.world_rank(m) == t.rank / 2 * 2 + m);
  }
}

TEST_CASE("ring all-gather: exact bytes, closed-form counters", "[comm]") {
  Communicator comm(world_rank());
  for (int X : layouts()) {
    Topology t(X);
    for (Group& g : groups(t))
      for (DType d : {DType::F32, DType::BF16, DType::I8, DType::I4})
        for (int64_t count : {0, 2, 1000}) {
          const int64_t b = bytes_of(d, count);
          std::vector<char> mine(static_cast<size_t>(b)), all(static_cast<size_t>(b * g.size()), 0);
          for (int64_t i = 0; i < b; ++i) mine[size_t(i)] = char(g.rank() * 31 + i);
          comm.counters().reset();
          comm.allgather(g, mine.data(), all.data(), count, d, Purpose::FwdGather, "u");
          for (int m = 0; m < g.size(); ++m)
            for (int64_t i = 0; i < b; ++i) REQUIRE(all[size_t(m * b + i)] == char(m * 31 + i));
          const Bytes want = ring_bytes(g, b), got = comm.counters().at(Kind::AllGather, Purpose::FwdGather);
          CHECK(got.intra == want.intra);
          CHECK(got.inter == want.inter);
          CHECK(comm.counters().total().total() == want.total());
        }
  }
}

TEST_CASE("world ring crosses nodes only from local rank X-1", "[comm]") {
  Communicator comm(world_rank());
  for (int X : layouts()) {
    Topology t(X);
    Group g = Group::world(t);
    const int64_t b = 4 * 333;
    std::vector<float> mine(333, float(t.rank)), all(static_cast<size_t>(333 * t.P));
    comm.counters().reset();
    comm.allgather(g, mine.data(), all.data(), 333, DType::F32, Purpose::BwdGather, "u");
    const Bytes got = comm.counters().of(Purpose::BwdGather);
    const bool last_local = t.local == X - 1 && t.Y > 1;
    CHECK(got.inter == (last_local ? (t.P - 1) * b : 0));
    CHECK(got.intra == (last_local ? 0 : (t.P - 1) * b));
    // Whole job: Y ranks each send (P-1)·b across nodes.
    int64_t inter = got.inter, total_inter = 0;
    MPI_Allreduce(&inter, &total_inter, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total_inter == (t.Y > 1 ? int64_t(t.Y) * (t.P - 1) * b : 0));
  }
}

TEST_CASE("in-place all-gather", "[comm]") {
  Communicator comm(world_rank());
  Topology t(1);
  Group g = Group::world(t);
  std::vector<int> all(static_cast<size_t>(5 * t.P), -1);
  for (int i = 0; i < 5; ++i) all[size_t(t.rank * 5 + i)] = t.rank * 10 + i;
  comm.allgather(g, all.data() + t.rank * 5, all.data(), 10, DType::BF16, Purpose::Other, "inplace");
  for (int m = 0; m < t.P; ++m)
    for (int i = 0; i < 5; ++i) REQUIRE(all[size_t(m * 5 + i)] == m * 10 + i);
}

TEST_CASE("ring reduce-scatter f32: exact sum in the documented order", "[comm]") {
  Communicator comm(world_rank());
  for (int X : layouts()) {
    Topology t(X);
    for (Group& g : groups(t))
      for (int64_t n : {0, 1, 777}) {
        const int p = g.size(), r = g.rank();
        std::vector<float> in(static_cast<size_t>(p * n)), out(static_cast<size_t>(n), -1.0f);
        for (int64_t i = 0; i < p * n; ++i) in[size_t(i)] = value(r, i);
        comm.counters().reset();
        comm.reduce_scatter(g, in.data(), out.data(), n, DType::F32, Purpose::GradReduce, "u");
        for (int64_t i = 0; i < n; ++i) {
          // Block r is summed as x[r+1] + x[r+2] + ... + x[r] (members mod p).
          const int64_t j = r * n + i;
          float want = value((r + 1) % p, j);
          for (int k = 2; k <= p; ++k) want += value((r + k) % p, j);
          REQUIRE(out[size_t(i)] == want);  // bitwise: the order is deterministic
        }
        const Bytes want = ring_bytes(g, 4 * n),
                    got = comm.counters().at(Kind::ReduceScatter, Purpose::GradReduce);
        CHECK(got.intra == want.intra);
        CHECK(got.inter == want.inter);
      }
  }
}

TEST_CASE("ring reduce-scatter bf16 stays within ((p-1)·2^-8 + 2^-16)·Σ|x| of f32", "[comm]") {
  Communicator comm(world_rank());
  for (int X : layouts()) {
    Topology t(X);
    Group g = Group::world(t);
    const int p = g.size(), r = g.rank();
    const int64_t n = 1001;
    std::vector<float> in(static_cast<size_t>(p * n)), exact(static_cast<size_t>(n)),
        half(static_cast<size_t>(n));
    for (int64_t i = 0; i < p * n; ++i) in[size_t(i)] = value(r, i) * 100.0f;
    comm.reduce_scatter(g, in.data(), exact.data(), n, DType::F32, Purpose::GradReduce, "u");
    comm.counters().reset();
    comm.reduce_scatter(g, in.data(), half.data(), n, DType::BF16, Purpose::GradReduce, "u");
    // Each of the p-1 hops rounds a partial sum (|partial| ≤ Σ|x|) with relative error ≤ 2^-8
    // (bf16's unit roundoff); 2^-16 covers fp32 rounding and second-order terms.
    double max_err = 0;
    for (int64_t i = 0; i < n; ++i) {
      max_err = std::max(max_err, double(std::fabs(half[size_t(i)] - exact[size_t(i)])));
      double abs_sum = 0;
      for (int m = 0; m < p; ++m) abs_sum += std::fabs(value(m, r * n + i) * 100.0f);
      REQUIRE(std::fabs(half[size_t(i)] - exact[size_t(i)]) <=
              (p - 1) * std::ldexp(abs_sum, -8) + std::ldexp(abs_sum, -16));
    }
    CHECK((max_err > 0) == (p > 1));  // partial sums really travel as bf16
    const Bytes want = ring_bytes(g, 2 * n);
    CHECK(comm.counters().at(Kind::ReduceScatter, Purpose::GradReduce).intra == want.intra);
    CHECK(comm.counters().at(Kind::ReduceScatter, Purpose::GradReduce).inter == want.inter);
  }
}

TEST_CASE("pairwise all-to-all: exact blocks, closed-form counters", "[comm]") {
  Communicator comm(world_rank());
  for (int X : layouts()) {
    Topology t(X);
    for (Group& g : groups(t))
      for (DType d : {DType::I4, DType::F32}) {
        const int p = g.size(), r = g.rank();
        const int64_t count = 250, b = bytes_of(d, count);
        std::vector<char> send(static_cast<size_t>(p * b)), recv(static_cast<size_t>(p * b));
        for (int to = 0; to < p; ++to)
          for (int64_t i = 0; i < b; ++i) send[size_t(to * b + i)] = char(r * 17 + to * 5 + i);
        comm.counters().reset();
        comm.alltoall(g, send.data(), recv.data(), count, d, Purpose::GradReduce, "u");
        for (int from = 0; from < p; ++from)
          for (int64_t i = 0; i < b; ++i) REQUIRE(recv[size_t(from * b + i)] == char(from * 17 + r * 5 + i));
        int same = 0;
        for (int m = 0; m < p; ++m) same += g.same_node(m);
        const Bytes got = comm.counters().at(Kind::AllToAll, Purpose::GradReduce);
        CHECK(got.intra == (same - 1) * b);
        CHECK(got.inter == (p - same) * b);
        if (g.name() == "world") {
          CHECK(got.intra == (X - 1) * b);
          CHECK(got.inter == (t.P - X) * b);
        }
      }
  }
}

TEST_CASE("all-reduce: rank-order sum, identical bits on every rank", "[comm]") {
  Communicator comm(world_rank());
  for (int X : layouts()) {
    Topology t(X);
    for (Group& g : groups(t)) {
      const int p = g.size(), r = g.rank();
      std::vector<float> f(5);
      std::vector<double> d(3);
      for (int i = 0; i < 5; ++i) f[size_t(i)] = value(r, i);
      for (int i = 0; i < 3; ++i) d[size_t(i)] = double(value(r, 100 + i)) / 3.0;
      comm.counters().reset();
      comm.allreduce_sum(g, f.data(), 5, Purpose::Other, "norm");
      comm.allreduce_sum(g, d.data(), 3, Purpose::Other, "norm");
      for (int i = 0; i < 5; ++i) {
        float want = value(0, i);
        for (int m = 1; m < p; ++m) want += value(m, i);
        REQUIRE(f[size_t(i)] == want);
      }
      for (int i = 0; i < 3; ++i) {
        double want = double(value(0, 100 + i)) / 3.0;
        for (int m = 1; m < p; ++m) want += double(value(m, 100 + i)) / 3.0;
        REQUIRE(d[size_t(i)] == want);
      }
      // Bitwise agreement across the group.
      std::vector<double> all(static_cast<size_t>(3 * p));
      MPI_Allgather(d.data(), 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, g.comm());
      for (int m = 0; m < p; ++m) REQUIRE(std::memcmp(&all[size_t(3 * m)], d.data(), 24) == 0);
      const Bytes want = ring_bytes(g, 5 * 4 + 3 * 8),
                  got = comm.counters().at(Kind::AllReduce, Purpose::Other);
      CHECK(got.intra == want.intra);
      CHECK(got.inter == want.inter);
    }
  }
}

TEST_CASE("broadcast from every root", "[comm]") {
  Communicator comm(world_rank());
  for (int X : layouts()) {
    Topology t(X);
    for (Group& g : groups(t))
      for (int root = 0; root < g.size(); ++root) {
        const int64_t b = 301;
        std::vector<char> data(static_cast<size_t>(b), 0);
        if (g.rank() == root)
          for (int64_t i = 0; i < b; ++i) data[size_t(i)] = char(root + i);
        comm.counters().reset();
        comm.broadcast(g, data.data(), b, root, Purpose::Other, "init");
        for (int64_t i = 0; i < b; ++i) REQUIRE(data[size_t(i)] == char(root + i));
        int same = 0;
        for (int m = 0; m < g.size(); ++m) same += g.same_node(m);
        const Bytes got = comm.counters().at(Kind::Broadcast, Purpose::Other);
        CHECK(got.intra == (g.rank() == root ? (same - 1) * b : 0));
        CHECK(got.inter == (g.rank() == root ? (g.size() - same) * b : 0));
      }
  }
}

TEST_CASE("nonblocking all-gathers overlap and complete in any order", "[comm]") {
  Communicator comm(world_rank());
  for (int X : layouts()) {
    Topology t(X);
    Group w = Group::world(t), n = Group::node(t);
    const int64_t count = 4096;
    std::vector<uint16_t> a(count, uint16_t(t.rank)), b(count, uint16_t(1000 + t.rank));
    std::vector<uint16_t> ga(static_cast<size_t>(count * t.P)), gb(static_cast<size_t>(count * t.P)),
        gn(static_cast<size_t>(count * t.X));
    Request ra = comm.start_allgather(w, a.data(), ga.data(), count, DType::BF16, Purpose::FwdGather, "h.0");
    Request rb = comm.start_allgather(w, b.data(), gb.data(), count, DType::BF16, Purpose::FwdGather, "h.1");
    Request rn = comm.start_allgather(n, b.data(), gn.data(), count, DType::BF16, Purpose::BwdGather, "h.1");
    for (int i = 0; i < 3; ++i) comm.test(rb);  // progress without blocking
    comm.wait(rb);
    CHECK_FALSE(rb.active());
    comm.wait(rn);
    comm.wait(ra);
    CHECK(comm.test(ra));
    for (int m = 0; m < t.P; ++m) {
      REQUIRE(ga[size_t(m * count)] == m);
      REQUIRE(ga[size_t(m * count + count - 1)] == m);
      REQUIRE(gb[size_t(m * count + 7)] == 1000 + m);
    }
    for (int m = 0; m < t.X; ++m) REQUIRE(gn[size_t(m * count + 3)] == 1000 + t.node * X + m);
    // A request dropped in flight is completed by its destructor: fresh inputs and a
    // poisoned output, so that only this gather can have written what is checked.
    std::vector<uint16_t> c(count, uint16_t(2000 + t.rank)), gc(static_cast<size_t>(count * t.P), 0xffff);
    {
      Request dropped =
          comm.start_allgather(w, c.data(), gc.data(), count, DType::BF16, Purpose::FwdGather, "h.2");
    }
    int64_t wrong = 0;  // elements that differ from their member's input
    for (int64_t i = 0; i < count * t.P; ++i) wrong += gc[size_t(i)] != 2000 + i / count;
    CHECK(wrong == 0);
  }
}

TEST_CASE("messages larger than the per-message limit are split", "[comm]") {
  Communicator comm(world_rank(), 600, 7);  // tiny limit: every buffer travels as many odd-sized pieces
  Topology t(1);
  Group g = Group::world(t);
  const int p = g.size(), r = g.rank();
  const int64_t n = 101;
  std::vector<float> in(static_cast<size_t>(p * n)), out(static_cast<size_t>(n)),
      all(static_cast<size_t>(p * n));
  for (int64_t i = 0; i < p * n; ++i) in[size_t(i)] = float(r + i);
  comm.reduce_scatter(g, in.data(), out.data(), n, DType::BF16, Purpose::GradReduce, "big");
  for (int64_t i = 0; i < n; ++i) {
    float want = 0;
    for (int m = 0; m < p; ++m) want += float(m + r * n + i);
    REQUIRE(out[size_t(i)] == Approx(want).epsilon(0.01));
  }
  comm.allgather(g, in.data(), all.data(), n, DType::F32, Purpose::Other, "big");
  for (int m = 0; m < p; ++m) REQUIRE(all[size_t(m * n + 5)] == float(m + 5));
  CHECK_THROWS_AS(Communicator(0, 600, int64_t(1) << 31), Error);
}

TEST_CASE("bad arguments are refused", "[comm]") {
  Communicator comm(world_rank());
  Topology t(1);
  Group g = Group::world(t);
  std::vector<char> buf(static_cast<size_t>(16 * t.P));
  CHECK_THROWS_WITH(comm.allgather(g, buf.data(), buf.data(), 3, DType::I4, Purpose::Other, "odd"),
                    Catch::Contains("even element count"));
  std::vector<float> f(static_cast<size_t>(t.P));
  CHECK_THROWS_WITH(comm.reduce_scatter(g, f.data(), f.data(), 1, DType::I8, Purpose::GradReduce, "u"),
                    Catch::Contains("f32 or bf16"));
  CHECK_THROWS_AS(comm.broadcast(g, buf.data(), 1, t.P, Purpose::Other, "u"), Error);
}

// Run by the ctest entry comm_watchdog (2 ranks): rank 1 stalls at step 3, rank 0's watchdog must abort.
TEST_CASE("watchdog aborts a stalled collective with one line", "[.watchdog]") {
  Communicator comm(world_rank(), 1.0);
  Topology t(1);
  Group g = Group::world(t);
  comm.set_stall(1, 3);
  comm.set_step(2);
  float x = 1.0f;
  comm.allreduce_sum(g, &x, 1, Purpose::Other, "warmup");
  comm.set_step(3);
  comm.allreduce_sum(g, &x, 1, Purpose::Other, "h.3");
  FAIL("the stalled collective completed");
}
