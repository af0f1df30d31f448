#include <mpi.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "src/base/errors.hpp"
#include "src/comm/topology.hpp"

using namespace zeropp;

// An Error raised outside agree_on_error (src/app/cli.cpp): when every rank raises one,
// one line says it; a rank that raises one alone must learn so in bounded time.
TEST_CASE("every_rank_raised: every rank in time, or one rank alone", "[errors]") {
  MPI_Comm c = MPI_COMM_NULL;
  ZCHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  const UniqueComm owned(c);
  int rank = 0, P = 0;
  ZCHECK_MPI(MPI_Comm_rank(c, &rank));
  ZCHECK_MPI(MPI_Comm_size(c, &P));
  CHECK(every_rank_raised(c, 60));
  if (P == 1) return;
  if (rank == 1) {
    CHECK_FALSE(every_rank_raised(c, 0.2));  // the others are elsewhere
  } else {
    usleep(500000);
    CHECK(every_rank_raised(c, 60));  // completes the barrier rank 1 left open
  }
}
