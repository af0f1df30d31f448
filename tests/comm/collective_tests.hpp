// The collective tests, written once and instantiated for each backend: a
// test file defines ZEROPP_COMM_BACKEND (a harness, tests/comm/comm_test_support.hpp)
// and includes this header (tests/comm/test_communicator.cpp: MPI;
// tests/cuda/test_communicator_nccl.cpp: NCCL). Collectives over world/node/cross
// groups of emulated layouts: exact results versus a direct computation, and
// byte counters versus the closed forms of src/comm/mpi/mpi_communicator.hpp.
#pragma once

#include <cmath>
#include <cstring>

#include "src/comm/stalling_communicator.hpp"
#include "tests/comm/comm_test_support.hpp"

#ifndef ZEROPP_COMM_BACKEND
#error "define ZEROPP_COMM_BACKEND (a backend harness) before including collective_tests.hpp"
#endif

namespace zeropp::test {

TEMPLATE_TEST_CASE("ring all-gather: exact bytes, closed-form counters", "[comm]", ZEROPP_COMM_BACKEND) {
  ZEROPP_SKIP_UNUSABLE_BACKEND();
  auto comm = TestType::make();
  for_each_group([&](const Topology&, Group& g) {
    for (DType d : {DType::F32, DType::BF16, DType::I8, DType::I4})
      for (int64_t count : {0, 2, 1000}) {
        const int64_t b = bytes_of(d, count);
        std::vector<char> host(static_cast<size_t>(b));
        for (int64_t i = 0; i < b; ++i) host[size_t(i)] = char(g.rank() * 31 + i);
        typename TestType::template Buffer<char> mine(host), all(std::vector<char>(size_t(b * g.size()), 0));
        comm->counters().reset();
        comm->allgather(g, mine.data(), all.data(), count, d, Purpose::FwdGather, "u");
        const std::vector<char> got_all = all.host();
        for (int m = 0; m < g.size(); ++m)
          for (int64_t i = 0; i < b; ++i) REQUIRE(got_all[size_t(m * b + i)] == char(m * 31 + i));
        const Bytes want = ring_bytes(g, b), got = comm->counters().at(Kind::AllGather, Purpose::FwdGather);
        CHECK(got.intra == want.intra);
        CHECK(got.inter == want.inter);
        CHECK(comm->counters().total().total() == want.total());
      }
  });
}

TEMPLATE_TEST_CASE("world ring crosses nodes only from local rank X-1", "[comm]", ZEROPP_COMM_BACKEND) {
  ZEROPP_SKIP_UNUSABLE_BACKEND();
  auto comm = TestType::make();
  for (int X : layouts()) {
    Topology t(X);
    Group g = Group::world(t);
    const int64_t b = 4 * 333;
    typename TestType::template Buffer<float> mine(std::vector<float>(333, float(t.rank))),
        all(std::vector<float>(size_t(333 * t.P)));
    comm->counters().reset();
    comm->allgather(g, mine.data(), all.data(), 333, DType::F32, Purpose::BwdGather, "u");
    const Bytes got = comm->counters().of(Purpose::BwdGather);
    const bool last_local = t.local == X - 1 && t.Y > 1;
    CHECK(got.inter == (last_local ? (t.P - 1) * b : 0));
    CHECK(got.intra == (last_local ? 0 : (t.P - 1) * b));
    // Whole job: Y ranks each send (P-1)·b across nodes.
    int64_t inter = got.inter, total_inter = 0;
    MPI_Allreduce(&inter, &total_inter, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total_inter == (t.Y > 1 ? int64_t(t.Y) * (t.P - 1) * b : 0));
  }
}

TEMPLATE_TEST_CASE("in-place all-gather", "[comm]", ZEROPP_COMM_BACKEND) {
  ZEROPP_SKIP_UNUSABLE_BACKEND();
  auto comm = TestType::make();
  Topology t(1);
  Group g = Group::world(t);
  std::vector<int> host(static_cast<size_t>(5 * t.P), -1);
  for (int i = 0; i < 5; ++i) host[size_t(t.rank * 5 + i)] = t.rank * 10 + i;
  typename TestType::template Buffer<int> all(host);
  comm->allgather(g, all.data() + t.rank * 5, all.data(), 10, DType::BF16, Purpose::Other, "inplace");
  host = all.host();
  for (int m = 0; m < t.P; ++m)
    for (int i = 0; i < 5; ++i) REQUIRE(host[size_t(m * 5 + i)] == m * 10 + i);
}

TEMPLATE_TEST_CASE("ring reduce-scatter f32: exact sum in the documented order", "[comm]",
                   ZEROPP_COMM_BACKEND) {
  ZEROPP_SKIP_UNUSABLE_BACKEND();
  auto comm = TestType::make();
  for_each_group([&](const Topology&, Group& g) {
    for (int64_t n : {0, 1, 777}) {
      const int p = g.size(), r = g.rank();
      std::vector<float> host(static_cast<size_t>(p * n));
      for (int64_t i = 0; i < p * n; ++i) host[size_t(i)] = value(r, i);
      typename TestType::template Buffer<float> in(host), out(std::vector<float>(size_t(n), -1.0f));
      comm->counters().reset();
      comm->reduce_scatter(g, in.data(), out.data(), n, DType::F32, Purpose::GradReduce, "u");
      const std::vector<float> got_out = out.host();
      for (int64_t i = 0; i < n; ++i) {
        // Block r is summed as x[r+1] + x[r+2] + ... + x[r] (members mod p).
        const int64_t j = r * n + i;
        float want = value((r + 1) % p, j);
        for (int k = 2; k <= p; ++k) want += value((r + k) % p, j);
        REQUIRE(got_out[size_t(i)] == want);  // bitwise: the order is deterministic
      }
      const Bytes want = ring_bytes(g, 4 * n),
                  got = comm->counters().at(Kind::ReduceScatter, Purpose::GradReduce);
      CHECK(got.intra == want.intra);
      CHECK(got.inter == want.inter);
    }
  });
}

TEMPLATE_TEST_CASE("ring reduce-scatter bf16 stays within ((p-1)·2^-8 + 2^-16)·Σ|x| of f32", "[comm]",
                   ZEROPP_COMM_BACKEND) {
  ZEROPP_SKIP_UNUSABLE_BACKEND();
  auto comm = TestType::make();
  for (int X : layouts()) {
    Topology t(X);
    Group g = Group::world(t);
    const int p = g.size(), r = g.rank();
    const int64_t n = 1001;
    std::vector<float> host(static_cast<size_t>(p * n));
    for (int64_t i = 0; i < p * n; ++i) host[size_t(i)] = value(r, i) * 100.0f;
    typename TestType::template Buffer<float> in(host), exact_buf{std::vector<float>(size_t(n))},
        half_buf{std::vector<float>(size_t(n))};
    comm->reduce_scatter(g, in.data(), exact_buf.data(), n, DType::F32, Purpose::GradReduce, "u");
    comm->counters().reset();
    comm->reduce_scatter(g, in.data(), half_buf.data(), n, DType::BF16, Purpose::GradReduce, "u");
    const std::vector<float> exact = exact_buf.host(), half = half_buf.host();
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
    CHECK(comm->counters().at(Kind::ReduceScatter, Purpose::GradReduce).intra == want.intra);
    CHECK(comm->counters().at(Kind::ReduceScatter, Purpose::GradReduce).inter == want.inter);
  }
}

TEMPLATE_TEST_CASE("pairwise all-to-all: exact blocks, closed-form counters", "[comm]", ZEROPP_COMM_BACKEND) {
  ZEROPP_SKIP_UNUSABLE_BACKEND();
  auto comm = TestType::make();
  for_each_group([&](const Topology& t, Group& g) {
    for (DType d : {DType::I4, DType::F32}) {
      const int p = g.size(), r = g.rank();
      const int64_t count = 250, b = bytes_of(d, count);
      std::vector<char> host(static_cast<size_t>(p * b));
      for (int to = 0; to < p; ++to)
        for (int64_t i = 0; i < b; ++i) host[size_t(to * b + i)] = char(r * 17 + to * 5 + i);
      typename TestType::template Buffer<char> send(host), recv(std::vector<char>(size_t(p * b)));
      comm->counters().reset();
      comm->alltoall(g, send.data(), recv.data(), count, d, Purpose::GradReduce, "u");
      const std::vector<char> got_recv = recv.host();
      for (int from = 0; from < p; ++from)
        for (int64_t i = 0; i < b; ++i)
          REQUIRE(got_recv[size_t(from * b + i)] == char(from * 17 + r * 5 + i));
      int same = 0;
      for (int m = 0; m < p; ++m) same += g.same_node(m);
      const Bytes got = comm->counters().at(Kind::AllToAll, Purpose::GradReduce);
      CHECK(got.intra == (same - 1) * b);
      CHECK(got.inter == (p - same) * b);
      if (g.name() == "world") {
        CHECK(got.intra == (t.X - 1) * b);
        CHECK(got.inter == (t.P - t.X) * b);
      }
    }
  });
}

TEMPLATE_TEST_CASE("all-reduce: rank-order sum, identical bits on every rank", "[comm]",
                   ZEROPP_COMM_BACKEND) {
  ZEROPP_SKIP_UNUSABLE_BACKEND();
  auto comm = TestType::make();
  for_each_group([&](const Topology&, Group& g) {
    const int p = g.size(), r = g.rank();
    std::vector<float> hf(5);
    std::vector<double> hd(3);
    for (int i = 0; i < 5; ++i) hf[size_t(i)] = value(r, i);
    for (int i = 0; i < 3; ++i) hd[size_t(i)] = double(value(r, 100 + i)) / 3.0;
    typename TestType::template Buffer<float> fb(hf);
    typename TestType::template Buffer<double> db(hd);
    comm->counters().reset();
    comm->allreduce_sum(g, fb.data(), 5, Purpose::Other, "norm");
    comm->allreduce_sum(g, db.data(), 3, Purpose::Other, "norm");
    const std::vector<float> f = fb.host();
    const std::vector<double> d = db.host();
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
                got = comm->counters().at(Kind::AllReduce, Purpose::Other);
    CHECK(got.intra == want.intra);
    CHECK(got.inter == want.inter);
  });
}

TEMPLATE_TEST_CASE("broadcast from every root", "[comm]", ZEROPP_COMM_BACKEND) {
  ZEROPP_SKIP_UNUSABLE_BACKEND();
  auto comm = TestType::make();
  for_each_group([&](const Topology&, Group& g) {
    for (int root = 0; root < g.size(); ++root) {
      const int64_t b = 301;
      std::vector<char> host(static_cast<size_t>(b), 0);
      if (g.rank() == root)
        for (int64_t i = 0; i < b; ++i) host[size_t(i)] = char(root + i);
      typename TestType::template Buffer<char> data(host);
      comm->counters().reset();
      comm->broadcast(g, data.data(), b, root, Purpose::Other, "init");
      host = data.host();
      for (int64_t i = 0; i < b; ++i) REQUIRE(host[size_t(i)] == char(root + i));
      int same = 0;
      for (int m = 0; m < g.size(); ++m) same += g.same_node(m);
      const Bytes got = comm->counters().at(Kind::Broadcast, Purpose::Other);
      CHECK(got.intra == (g.rank() == root ? (same - 1) * b : 0));
      CHECK(got.inter == (g.rank() == root ? (g.size() - same) * b : 0));
    }
  });
}

TEMPLATE_TEST_CASE("nonblocking all-gathers overlap and complete in any order", "[comm]",
                   ZEROPP_COMM_BACKEND) {
  ZEROPP_SKIP_UNUSABLE_BACKEND();
  auto comm = TestType::make();
  using Buf = typename TestType::template Buffer<uint16_t>;
  for (int X : layouts()) {
    Topology t(X);
    Group w = Group::world(t), n = Group::node(t);
    const int64_t count = 4096;
    Buf a(std::vector<uint16_t>(count, uint16_t(t.rank))),
        b(std::vector<uint16_t>(count, uint16_t(1000 + t.rank)));
    Buf ga(std::vector<uint16_t>(size_t(count * t.P))), gb(std::vector<uint16_t>(size_t(count * t.P))),
        gn(std::vector<uint16_t>(size_t(count * t.X)));
    Request ra = comm->start_allgather(w, a.data(), ga.data(), count, DType::BF16, Purpose::FwdGather, "h.0");
    Request rb = comm->start_allgather(w, b.data(), gb.data(), count, DType::BF16, Purpose::FwdGather, "h.1");
    Request rn = comm->start_allgather(n, b.data(), gn.data(), count, DType::BF16, Purpose::BwdGather, "h.1");
    for (int i = 0; i < 3; ++i) comm->test(rb);  // progress without blocking
    comm->wait(rb);
    CHECK_FALSE(rb.active());
    comm->wait(rn);
    comm->wait(ra);
    CHECK(comm->test(ra));
    const std::vector<uint16_t> hga = ga.host(), hgb = gb.host(), hgn = gn.host();
    for (int m = 0; m < t.P; ++m) {
      REQUIRE(hga[size_t(m * count)] == m);
      REQUIRE(hga[size_t(m * count + count - 1)] == m);
      REQUIRE(hgb[size_t(m * count + 7)] == 1000 + m);
    }
    for (int m = 0; m < t.X; ++m) REQUIRE(hgn[size_t(m * count + 3)] == 1000 + t.node * X + m);
    // A request dropped in flight is completed by its destructor: fresh inputs and a
    // poisoned output, so that only this gather can have written what is checked.
    Buf c(std::vector<uint16_t>(count, uint16_t(2000 + t.rank))),
        gc(std::vector<uint16_t>(size_t(count * t.P), 0xffff));
    {
      Request dropped =
          comm->start_allgather(w, c.data(), gc.data(), count, DType::BF16, Purpose::FwdGather, "h.2");
    }
    const std::vector<uint16_t> hgc = gc.host();
    int64_t wrong = 0;  // elements that differ from their member's input
    for (int64_t i = 0; i < count * t.P; ++i) wrong += hgc[size_t(i)] != 2000 + i / count;
    CHECK(wrong == 0);
  }
}

TEMPLATE_TEST_CASE("bad arguments are refused", "[comm]", ZEROPP_COMM_BACKEND) {
  ZEROPP_SKIP_UNUSABLE_BACKEND();
  auto comm = TestType::make();
  Topology t(1);
  Group g = Group::world(t);
  typename TestType::template Buffer<char> buf(std::vector<char>(size_t(16 * t.P)));
  CHECK_THROWS_WITH(comm->allgather(g, buf.data(), buf.data(), 3, DType::I4, Purpose::Other, "odd"),
                    Catch::Contains("even element count"));
  typename TestType::template Buffer<float> f(std::vector<float>(size_t(t.P)));
  CHECK_THROWS_WITH(comm->reduce_scatter(g, f.data(), f.data(), 1, DType::I8, Purpose::GradReduce, "u"),
                    Catch::Contains("f32 or bf16"));
  CHECK_THROWS_AS(comm->broadcast(g, buf.data(), 1, t.P, Purpose::Other, "u"), Error);
}

// The fault-injection decorator with no rank stalling: the inner backend's
// results, its bytes in the decorator's counters, and the bytes of a
// collective started ahead in the next step's (Communicator::set_ahead).
TEMPLATE_TEST_CASE("a decorated communicator counts the inner backend's bytes, ahead included", "[comm]",
                   ZEROPP_COMM_BACKEND) {
  ZEROPP_SKIP_UNUSABLE_BACKEND();
  StallingCommunicator comm(TestType::make(), Topology(1).rank, 600, -1, 0);
  for_each_group([&](const Topology&, Group& g) {
    const int64_t b = 1000;
    std::vector<char> host(static_cast<size_t>(b));
    for (int64_t i = 0; i < b; ++i) host[size_t(i)] = char(g.rank() * 31 + i);
    typename TestType::template Buffer<char> mine(host), all(std::vector<char>(size_t(b * g.size()), 0));
    const Bytes want = ring_bytes(g, b);
    comm.counters().reset();
    comm.allgather(g, mine.data(), all.data(), b, DType::I8, Purpose::FwdGather, "u");
    const std::vector<char> got_all = all.host();
    for (int m = 0; m < g.size(); ++m)
      for (int64_t i = 0; i < b; ++i) REQUIRE(got_all[size_t(m * b + i)] == char(m * 31 + i));
    CHECK(comm.counters().at(Kind::AllGather, Purpose::FwdGather).intra == want.intra);
    CHECK(comm.counters().at(Kind::AllGather, Purpose::FwdGather).inter == want.inter);

    comm.counters().reset();
    comm.set_ahead(true);
    Request r = comm.start_allgather(g, mine.data(), all.data(), b, DType::I8, Purpose::FwdGather, "u");
    comm.set_ahead(false);
    comm.wait(r);
    CHECK(comm.counters().total().total() == 0);
    CHECK(comm.bytes_ahead() == want.total());
    comm.set_step(comm.step() + 1);
    comm.reset_counters();
    CHECK(comm.counters().at(Kind::AllGather, Purpose::FwdGather).total() == want.total());
    CHECK(comm.bytes_ahead() == 0);
  });
}

// Run by the ctest entries *_watchdog (2 ranks): rank 1 stalls at step 3, rank 0's watchdog must abort.
TEMPLATE_TEST_CASE("watchdog aborts a stalled collective with one line", "[.watchdog]", ZEROPP_COMM_BACKEND) {
  ZEROPP_SKIP_UNUSABLE_BACKEND();
  Topology t(1);
  auto comm = with_stall(TestType::make(1.0), t.rank, 1.0, 1, 3);
  Group g = Group::world(t);
  comm->set_step(2);
  typename TestType::template Buffer<float> x(std::vector<float>{1.0f});
  comm->allreduce_sum(g, x.data(), 1, Purpose::Other, "warmup");
  comm->set_step(3);
  comm->allreduce_sum(g, x.data(), 1, Purpose::Other, "h.3");
  FAIL("the stalled collective completed");
}

// Run by the ctest entries *_watchdog_gather (2 ranks, each its own node): rank 1 stalls
// before its all-gather, so rank 0's line must name it as the rank it waits for.
TEMPLATE_TEST_CASE("watchdog names the rank a stalled all-gather waits for", "[.watchdog-gather]",
                   ZEROPP_COMM_BACKEND) {
  ZEROPP_SKIP_UNUSABLE_BACKEND();
  Topology t(1);
  auto comm = with_stall(TestType::make(1.0), t.rank, 1.0, 1, 3);
  Group g = Group::world(t);
  typename TestType::template Buffer<float> mine(std::vector<float>{1.0f}), all(std::vector<float>(2));
  comm->set_step(3);
  comm->allgather(g, mine.data(), all.data(), 1, DType::F32, Purpose::Other, "h.3");
  FAIL("the stalled collective completed");
}

}  // namespace zeropp::test
