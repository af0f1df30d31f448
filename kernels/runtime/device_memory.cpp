#include "kernels/runtime/device_memory.hpp"

#include <execinfo.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/runtime/kernel_hooks.hpp"

#ifdef ZEROPP_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "kernels/cuda/check.hpp"
#endif

namespace zeropp {

namespace {

// The poisoned arena: one reservation, bump-allocated in whole pages (so
// that no other data shares a page with a device buffer), reset when the
// last buffer is freed (tests build engines one after another).
struct Arena {
  static constexpr int64_t kReserve = int64_t(16) << 30;  // address space only (MAP_NORESERVE)
  char* base = nullptr;
  int64_t used = 0, live = 0, page = 4096;
  int depth = 0;  // open DeviceAccess scopes

  void protect(int prot) const {
    if (used > 0 && mprotect(base, size_t(used), prot) != 0)
      throw std::runtime_error(std::string("device arena: mprotect failed: ") + std::strerror(errno));
  }
};

Arena* arena = nullptr;  // null: plain allocations
bool mode_read = false;

void on_segv(int sig, siginfo_t* info, void*) {
  const char* addr = static_cast<const char*>(info->si_addr);
  if (arena && addr >= arena->base && addr < arena->base + Arena::kReserve) {
    static const char msg[] =
        "zeropp: host access to a device buffer outside a kernel or communicator call "
        "(ZEROPP_POISON_HOST_ACCESS); backtrace:\n";
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
    }
    void* frames[64];
    backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void begin_access() {
  if (arena->depth++ == 0) arena->protect(PROT_READ | PROT_WRITE);
}
void end_access() {
  if (--arena->depth == 0) arena->protect(PROT_NONE);
}
void open_arena() {
  mode_read = true;
  const char* env = std::getenv("ZEROPP_POISON_HOST_ACCESS");
  if (!env || std::string(env) == "0") return;
  if (std::string(env) != "1")
    throw std::invalid_argument("ZEROPP_POISON_HOST_ACCESS=" + std::string(env) + ": must be 0 or 1");
  void* p =
      mmap(nullptr, size_t(Arena::kReserve), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw std::runtime_error(std::string("device arena: mmap failed: ") + std::strerror(errno));
  arena = new Arena;
  arena->base = static_cast<char*>(p);
  arena->page = sysconf(_SC_PAGESIZE);
  // Kernels and deep copies may touch the arena; the hook lives as long as the process.
  static ScopedKernelHook hook({begin_access, end_access});
  struct sigaction sa {};
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, nullptr);
}

}  // namespace

bool poison_host_access() {
  if (!mode_read) open_arena();
  return arena != nullptr;
}

DeviceAllocation device_alloc(const char* label, int64_t bytes) {
  if (bytes <= 0) return {};
#ifdef ZEROPP_HAVE_CUDA
  if (DeviceContext* d = device_context()) {
    void* p = nullptr;
    if (const cudaError_t e = cudaMalloc(&p, size_t(bytes)); e != cudaSuccess)
      fatal("cudaMalloc", __FILE__, __LINE__,
            std::string(label) + " (" + std::to_string(bytes) + " bytes): " + cudaGetErrorString(e));
    ZCHECK_CUDA(cudaMemsetAsync(p, 0, size_t(bytes), d->stream));
    // zeros before any stream (the communicator's too) or a transfer reads them
    ZCHECK_CUDA(cudaStreamSynchronize(d->stream));
    return {p, MemoryPlace::Device};
  }
#endif
  if (!poison_host_access()) {
    void* p = Kokkos::kokkos_malloc<MemSpace>(label, size_t(bytes));
    Kokkos::deep_copy(Kokkos::View<unsigned char*, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                          static_cast<unsigned char*>(p), size_t(bytes)),
                      0);
    return {p, MemoryPlace::Host};
  }
  // fresh pages (and pages given back at the last reset) read as zeros
  const int64_t size = (bytes + arena->page - 1) / arena->page * arena->page;
  if (arena->used + size > Arena::kReserve)
    throw std::runtime_error("device arena: " + std::string(label) + " does not fit (" +
                             std::to_string(bytes) + " bytes)");
  char* p = arena->base + arena->used;
  arena->used += size;
  ++arena->live;
  if (arena->depth > 0) arena->protect(PROT_READ | PROT_WRITE);
  return {p, MemoryPlace::Host};
}

void device_free(const DeviceAllocation& a) {
  if (!a.p) return;
#ifdef ZEROPP_HAVE_CUDA  // (builds without CUDA make no device allocations)
  if (a.place == MemoryPlace::Device) {
    // needs the device selected, not the context: it may be gone already
    ZCHECK_CUDA(cudaFree(a.p));  // waits for the device's work on it
    return;
  }
#endif
  if (!arena) {
    Kokkos::kokkos_free<MemSpace>(a.p);
    return;
  }
  if (--arena->live == 0) {  // the last one: give the pages back and start over
    madvise(arena->base, size_t(arena->used), MADV_DONTNEED);
    mprotect(arena->base, size_t(arena->used), PROT_NONE);
    arena->used = 0;
  }
}

#ifdef ZEROPP_HAVE_CUDA
void device_upload(void* dst, const void* host, int64_t bytes) {
  if (bytes <= 0) return;
  const cudaStream_t stream = device_context()->stream;
  ZCHECK_CUDA(cudaMemcpyAsync(dst, host, size_t(bytes), cudaMemcpyHostToDevice, stream));
  ZCHECK_CUDA(cudaStreamSynchronize(stream));
}
void device_download(void* host, const void* src, int64_t bytes) {
  if (bytes <= 0) return;
  const cudaStream_t stream = device_context()->stream;
  ZCHECK_CUDA(cudaMemcpyAsync(host, src, size_t(bytes), cudaMemcpyDeviceToHost, stream));
  ZCHECK_CUDA(cudaStreamSynchronize(stream));
}
#endif

DeviceAccess::DeviceAccess() {
  if (poison_host_access()) begin_access();
}
DeviceAccess::~DeviceAccess() {
  if (arena) end_access();
}

}  // namespace zeropp
