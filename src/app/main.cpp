// zeropp: the BLAS kernels, MPI, then Kokkos, then the command line.
#include <mpi.h>

#include <Kokkos_Core.hpp>

#include "src/app/cli.hpp"
#include "src/run/blas_kernels.hpp"
#include "src/run/bounded_finalize.hpp"

int main(int argc, char** argv) {
  zeropp::choose_blas_kernels(argv);  // may start this program again, before MPI does
  // FUNNELED: helper threads (checkpoint checksums) never call MPI.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rc = 0;
  {
    // Kokkos gets no argv: its own --help would shadow ours. Device
    // selection by local rank comes with the GPU path.
    Kokkos::ScopeGuard kokkos(Kokkos::InitArguments{});
    rc = zeropp::run_cli(argc, argv);
  }
  // 20 s: MPI_Finalize takes well under a second when it returns at all.
  return zeropp::bounded_finalize(rc, 20.0);
}
