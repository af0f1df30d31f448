// zeropp: MPI first, then Kokkos, then the command line.
#include <mpi.h>

#include <Kokkos_Core.hpp>

#include "src/cli.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  {
    // Kokkos gets no argv: its own --help would shadow ours. Device
    // selection by local rank comes with the GPU path.
    Kokkos::ScopeGuard kokkos(Kokkos::InitArguments{});
    rc = zeropp::run_cli(argc, argv);
  }
  MPI_Finalize();
  return rc;
}
