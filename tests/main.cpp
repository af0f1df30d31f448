// Catch2 main for the whole suite: MPI first, then Kokkos, as in the binary.
// Multi-rank tests run under mpiexec; every rank runs the same test cases and
// a failure on any rank fails the ctest entry through mpiexec's exit status.
#define CATCH_CONFIG_RUNNER
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <catch2/catch.hpp>

int main(int argc, char** argv) {
  // FUNNELED: helper threads (checkpoint checksums) never call MPI.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rc = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    rc = Catch::Session().run(argc, argv);
  }
  MPI_Finalize();
  return rc;
}
