// Topology: emulated layouts, detection on this machine, the machine's local
// rank, bad ranks_per_node.
#include <unistd.h>

#include <catch2/catch.hpp>

#include "src/base/errors.hpp"
#include "src/comm/topology.hpp"

using namespace zeropp;

namespace {
int comm_size(MPI_Comm c) {
  int s = 0;
  MPI_Comm_size(c, &s);
  return s;
}
int comm_rank(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
}  // namespace

TEST_CASE("emulated topology is node-major", "[comm]") {
  const int P = comm_size(MPI_COMM_WORLD), rank = comm_rank(MPI_COMM_WORLD);
  for (int X : {1, 2, 4}) {
    if (P % X != 0) continue;
    Topology t(X);
    CHECK(t.P == P);
    CHECK(t.X == X);
    CHECK(t.Y == P / X);
    CHECK(t.rank == rank);
    CHECK(t.node == rank / X);
    CHECK(t.local == rank % X);
    CHECK(t.emulated);
    CHECK(t.describe() == "P=" + std::to_string(P) + " X=" + std::to_string(X) +
                              " Y=" + std::to_string(P / X) + " (emulated)");
    for (int w = 0; w < P; ++w) CHECK(t.node_of(w) == w / X);
    CHECK(comm_size(t.world.get()) == P);
    CHECK(comm_size(t.node_comm.get()) == X);
    CHECK(comm_rank(t.node_comm.get()) == t.local);
    CHECK(comm_size(t.cross_comm.get()) == P / X);
    CHECK(comm_rank(t.cross_comm.get()) == t.node);
    // Movable: the comms travel with it.
    const MPI_Comm node = t.node_comm.get();
    Topology moved(std::move(t));
    CHECK(moved.node_comm.get() == node);
    CHECK(t.node_comm.get() == MPI_COMM_NULL);
  }
}

TEST_CASE("detected topology: one machine is one node", "[comm]") {
  Topology t;
  CHECK_FALSE(t.emulated);
  CHECK(t.X == t.P);
  CHECK(t.Y == 1);
  char host[256] = {};
  REQUIRE(gethostname(host, sizeof host - 1) == 0);
  CHECK(t.hosts == std::vector<std::string>{host});
  CHECK(t.describe() ==
        "P=" + std::to_string(t.P) + " X=" + std::to_string(t.P) + " Y=1 (nodes " + host + ")");
}

// Emulated nodes share this machine's GPUs: the device is picked by the rank
// among the processes here, which differs on every rank, while `local` repeats.
TEST_CASE("host_local: the rank among this machine's processes, emulated nodes or not", "[comm]") {
  const int P = comm_size(MPI_COMM_WORLD), rank = comm_rank(MPI_COMM_WORLD);
  for (int X : {0, 1, 2}) {
    if (X > 0 && P % X != 0) continue;
    Topology t(X);
    CHECK(t.host_ranks == P);
    CHECK(t.host_local == rank);
  }
}

TEST_CASE("ranks_per_node that does not divide P fails on every rank", "[comm]") {
  const int P = comm_size(MPI_COMM_WORLD);
  CHECK_THROWS_WITH(Topology(P + 1), "zero.ranks_per_node = " + std::to_string(P + 1) +
                                         " does not divide the number of ranks " + std::to_string(P));
  CHECK_THROWS_WITH(Topology(-2), Catch::Contains("zero.ranks_per_node = -2"));
}
