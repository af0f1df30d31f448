// Code run around every Kokkos kernel (parallel_for / reduce / scan) and deep
// copy.
//
// Kokkos's tool interface has one slot per event, and two users need it: the
// poison arena of device_memory.cpp (device buffers readable only inside
// kernels) and the engine's collective progress (src/zero/kernel_progress.hpp).
// Each registers here and all are called: `before` hooks in the order they
// were added, `after` hooks in reverse order (so nested scopes close inside
// out). Not thread-safe: hooks are added and removed by the thread that runs
// the kernels.
#pragma once

#include <functional>

namespace zeropp {

struct KernelHook {
  std::function<void()> before, after;  // either may be empty
};

// Adds `hook` while the object lives.
class ScopedKernelHook {
 public:
  explicit ScopedKernelHook(KernelHook hook);
  ~ScopedKernelHook();
  ScopedKernelHook(const ScopedKernelHook&) = delete;
  ScopedKernelHook& operator=(const ScopedKernelHook&) = delete;

 private:
  int id_;
};

// The hooks around a kernel that is not a Kokkos one (plain loops, OpenMP:
// kernels/runtime/parallel_chunks.hpp), exactly as Kokkos runs them around a
// parallel_for. Open it on the thread that runs the kernels, never on a worker.
class KernelScope {
 public:
  KernelScope();
  ~KernelScope();
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;

 private:
  bool active_;  // hooks were registered when it opened
};

}  // namespace zeropp
