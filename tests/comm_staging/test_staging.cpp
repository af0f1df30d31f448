// The staging communicator (src/comm/staging_communicator.hpp) over the MPI
// backend with host-memory staging: the collective tests of
// tests/comm/collective_tests.hpp (results and byte counters equal the MPI
// backend's closed forms), what it copies, and comm.device_staging's choice
// and refusals. The same collective tests with pinned staging of device
// buffers are in tests/cuda/test_communicator_nccl.cpp (a GPU needed).
#include <chrono>

#include "src/comm/make_communicator.hpp"
#include "tests/comm/staging_support.hpp"
// collective_tests.hpp needs the harness declared first.
#define ZEROPP_COMM_BACKEND zeropp::test::StagedHostBackend
#include "tests/comm/collective_tests.hpp"

using namespace zeropp;
using namespace zeropp::test;

TEST_CASE("staging copies each input in and each output back once", "[comm-staging]") {
  auto owned = std::make_unique<HostStager>();
  HostStager& st = *owned;
  auto comm = staged_mpi(std::move(owned), 600);
  CHECK(std::string(comm->backend()) == "mpi+staging (host memory)");
  Topology t(1);
  Group g = Group::world(t);
  const int64_t n = 1000, p = t.P;
  HostBuffer<float> in(std::vector<float>(size_t(n * p), 1.0f)), out(std::vector<float>(size_t(n), 0.0f));
  comm->reduce_scatter(g, in.data(), out.data(), n, DType::F32, Purpose::GradReduce, "u");
  CHECK(st.to_host_bytes == 4 * n * p);
  CHECK(st.to_device_bytes == 4 * n);
  for (float x : out.host()) REQUIRE(x == float(p));
  // Two gathers in flight at once hold their own staging blocks.
  HostBuffer<char> a(std::vector<char>(10, char(t.rank))), b(std::vector<char>(10, char(100 + t.rank)));
  HostBuffer<char> ga(std::vector<char>(size_t(10 * p))), gb(std::vector<char>(size_t(10 * p)));
  Request ra = comm->start_allgather(g, a.data(), ga.data(), 10, DType::I8, Purpose::FwdGather, "a");
  Request rb = comm->start_allgather(g, b.data(), gb.data(), 10, DType::I8, Purpose::FwdGather, "b");
  comm->wait(rb);
  comm->wait(ra);
  for (int64_t i = 0; i < 10 * p; ++i) {
    REQUIRE(ga.host()[size_t(i)] == char(i / 10));
    REQUIRE(gb.host()[size_t(i)] == char(100 + i / 10));
  }
  CHECK(st.to_host_bytes == 4 * n * p + 20);
  CHECK(st.to_device_bytes == 4 * n + 20 * p);
  // The bytes on the wire are the host backend's, moved into the decorator's counters.
  CHECK(comm->counters().at(Kind::AllGather, Purpose::FwdGather).total() == 2 * (p - 1) * 10);
  CHECK(comm->host().counters().total().total() == 0);
}

TEST_CASE("a staged collective waits for its host backend's emulated links", "[comm-staging]") {
  // 0.1 s a message across nodes
  auto comm =
      staged_mpi(std::make_unique<HostStager>(), 600, EmulatedLinks(LinkEmulator(0, 100000), LinkEmulator()));
  Topology t(1);  // every rank its own node: the ring's hops cross nodes
  Group g = Group::world(t);
  if (t.P == 1) return;  // no hops
  HostBuffer<char> mine(std::vector<char>(8, 'x')), all(std::vector<char>(size_t(8 * t.P)));
  const auto t0 = std::chrono::steady_clock::now();
  comm->allgather(g, mine.data(), all.data(), 8, DType::I8, Purpose::Other, "links");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(s >= 0.1 * (t.P - 1) * 0.9);  // p-1 hops, each at least one latency
}

TEST_CASE("comm.device_staging: needs CUDA, a device and the mpi backend", "[comm-staging]") {
  const CommAbilities gpu{true, 1, "", true};
  CHECK_NOTHROW(check_device_staging(false, CommBackend::Nccl, CommAbilities{}));
  CHECK_NOTHROW(check_device_staging(true, CommBackend::Mpi, gpu));
  CHECK_THROWS_WITH(
      check_device_staging(true, CommBackend::Mpi, CommAbilities{false, 0, "", true}),
      "comm.device_staging = true: this build has no CUDA (configure with -DZEROPP_ENABLE_CUDA=ON)");
  CHECK_THROWS_WITH(
      check_device_staging(true, CommBackend::Mpi, CommAbilities{true, 0, "no CUDA driver is loaded", true}),
      "comm.device_staging = true: no CUDA device: no CUDA driver is loaded");
  CHECK_THROWS_WITH(
      check_device_staging(true, CommBackend::Nccl, gpu),
      Catch::Contains("stages device buffers for the mpi backend, but comm.backend = \"nccl\""));
  // In this build and on this machine: either it is refused with one of those lines, or it is staged mpi.
  Topology t(1);
  const CommAbilities here = comm_abilities(false);
  if (!here.cuda_build || here.devices == 0) {
    CHECK_THROWS_WITH(make_communicator(CommBackend::Auto, t, 600, false, true),
                      Catch::StartsWith("comm.device_staging = true: "));
  } else {
    CHECK(std::string(make_communicator(CommBackend::Auto, t, 600, false, true)->backend()) ==
          "mpi+staging (pinned host memory)");
  }
  CHECK(std::string(make_communicator(CommBackend::Auto, t, 600, false, false)->backend()) == "mpi");
}
