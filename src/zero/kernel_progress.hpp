// Progress for collectives in flight while the model computes.
//
// The MPI backend moves a collective on (MPI's own progress, the next ring
// hop, qgZ's work between its hops) only when someone calls into it, and the
// model must not know MPI. So the engine registers a function that Kokkos calls
// after every kernel (parallel_for / reduce / scan) and deep copy, through
// kernels/runtime/kernel_hooks.hpp (Kokkos's tool callbacks, shared with the poison
// arena): collectives then advance between the model's ops
// (a few µs per call, ~30 calls per unit), not only at unit boundaries.
// GEMMs (OpenBLAS) are not Kokkos kernels: a collective waits at most until
// the kernel after the GEMM. docs/performance.md ("Overlap") compares this with
// progress at unit boundaries only.
#pragma once

#include <functional>

namespace zeropp {

// While alive, `poll` runs after every Kokkos kernel and deep copy (never
// re-entered: kernels that poll itself launches do not poll again). Several
// may be alive (e.g. two engines in a test): each runs.
class KernelProgress {
 public:
  explicit KernelProgress(std::function<void()> poll);
  ~KernelProgress();
  KernelProgress(const KernelProgress&) = delete;
  KernelProgress& operator=(const KernelProgress&) = delete;

 private:
  std::function<void()> poll_;
};

}  // namespace zeropp
