// Latency of a one-float MPI_Allreduce: the cost every small collective pays.
// Usage: mpiexec -n P zeropp_allreduce_latency [iterations]; rank 0 prints the mean in us.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iters = argc > 1 ? atoi(argv[1]) : 2000;
  float in = (float)rank, out = 0.0f;
  // Warm-up: the first calls set up connections.
  for (int i = 0; i < 20; ++i) MPI_Allreduce(&in, &out, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) MPI_Allreduce(&in, &out, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  const double us = (MPI_Wtime() - t0) / iters * 1e6;
  if (rank == 0) printf("ranks %d: %.1f us per 1-float MPI_Allreduce (%d iterations)\n", size, us, iters);
  MPI_Finalize();
  return 0;
}
