// The communicator: Group, the MPI backend's own limits, the choice of
// backend (comm.backend), and the collective tests of
// tests/comm/collective_tests.hpp instantiated for the MPI backend.
#define ZEROPP_COMM_BACKEND zeropp::test::MpiBackend
#include "src/comm/make_communicator.hpp"
#include "tests/comm/collective_tests.hpp"

using namespace zeropp;
using namespace zeropp::test;

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

TEST_CASE("messages larger than the per-message limit are split", "[comm]") {
  MpiCommunicator comm(world_rank(), 600, {},
                       7);  // tiny limit: every buffer travels as many odd-sized pieces
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
  CHECK_THROWS_AS(MpiCommunicator(0, 600, {}, int64_t(1) << 31), Error);
}

TEST_CASE("comm.backend: auto picks nccl only with CUDA, a device and device buffers", "[comm]") {
  const CommAbilities gpu{true, 1, "", true};
  CHECK(resolve_comm_backend(CommBackend::Auto, gpu) == CommBackend::Nccl);
  CHECK(resolve_comm_backend(CommBackend::Nccl, gpu) == CommBackend::Nccl);
  CHECK(resolve_comm_backend(CommBackend::Mpi, gpu) == CommBackend::Mpi);
  CHECK(resolve_comm_backend(CommBackend::Auto, CommAbilities{true, 1, "", false}) ==
        CommBackend::Mpi);  // host buffers
  CHECK(resolve_comm_backend(CommBackend::Auto, CommAbilities{true, 0, "no driver", true}) ==
        CommBackend::Mpi);
  CHECK(resolve_comm_backend(CommBackend::Auto, CommAbilities{false, 0, "", true}) == CommBackend::Mpi);
  // nccl where it cannot run: one error naming the key, the value and the reason.
  CHECK_THROWS_WITH(resolve_comm_backend(CommBackend::Nccl, CommAbilities{false, 0, "", true}),
                    Catch::Contains("comm.backend = \"nccl\"") && Catch::Contains("no CUDA"));
  CHECK_THROWS_WITH(
      resolve_comm_backend(CommBackend::Nccl, CommAbilities{true, 0, "no CUDA driver is loaded", true}),
      Catch::Contains("comm.backend = \"nccl\"") && Catch::Contains("no CUDA driver is loaded"));
  CHECK_THROWS_WITH(resolve_comm_backend(CommBackend::Nccl, CommAbilities{true, 2, "", false}),
                    Catch::Contains("comm.backend = \"nccl\"") && Catch::Contains("host memory"));
  // This build and machine, as the engine asks (host buffers): MPI.
  Topology t(1);
  CHECK(std::string(make_communicator(CommBackend::Auto, t, 600, false)->backend()) == "mpi");
}

// Run by the ctest entry comm_open_request (2 ranks): rank 0 starts an
// all-gather that rank 1 never joins and leaks its Request; destroying the
// communicator must abort with one line naming rank, collective and unit
// (a transfer left in flight otherwise surfaces as a hang in MPI_Finalize).
TEST_CASE("a communicator destroyed with a collective open aborts with one line", "[.open-request]") {
  Topology t(1);
  Group g = Group::world(t);
  std::vector<float> send{1.0f}, recv(size_t(t.P));
  if (t.rank == 0) {
    auto comm = std::make_unique<MpiCommunicator>(world_rank());
    comm->set_step(5);
    // leaked on purpose: never waited for, never destroyed
    new Request(comm->start_allgather(g, send.data(), recv.data(), 1, DType::F32, Purpose::FwdGather, "h.2"));
    comm.reset();
    FAIL("the communicator was destroyed with a collective open");
  }
  MPI_Barrier(MPI_COMM_WORLD);  // rank 1: waits for rank 0's abort
}
