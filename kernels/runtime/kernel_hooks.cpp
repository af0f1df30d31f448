#include "kernels/runtime/kernel_hooks.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <utility>
#include <vector>

namespace zeropp {

namespace {

std::vector<std::pair<int, KernelHook>> g_hooks;
int g_next_id = 0;

void run_before() {
  for (const auto& h : g_hooks)
    if (h.second.before) h.second.before();
}
void run_after() {
  for (auto it = g_hooks.rbegin(); it != g_hooks.rend(); ++it)
    if (it->second.after) it->second.after();
}
void begin_kernel(const char*, uint32_t, uint64_t*) { run_before(); }
void end_kernel(uint64_t) { run_after(); }
void begin_copy(Kokkos_Profiling_SpaceHandle, const char*, const void*, Kokkos_Profiling_SpaceHandle,
                const char*, const void*, uint64_t) {
  run_before();
}

// Installed while any hook is registered (no callback cost otherwise).
void install(bool on) {
  namespace T = Kokkos::Tools::Experimental;
  T::set_begin_parallel_for_callback(on ? begin_kernel : nullptr);
  T::set_end_parallel_for_callback(on ? end_kernel : nullptr);
  T::set_begin_parallel_reduce_callback(on ? begin_kernel : nullptr);
  T::set_end_parallel_reduce_callback(on ? end_kernel : nullptr);
  T::set_begin_parallel_scan_callback(on ? begin_kernel : nullptr);
  T::set_end_parallel_scan_callback(on ? end_kernel : nullptr);
  T::set_begin_deep_copy_callback(on ? begin_copy : nullptr);
  T::set_end_deep_copy_callback(on ? run_after : nullptr);
}

}  // namespace

KernelScope::KernelScope() : active_(!g_hooks.empty()) {
  if (active_) run_before();
}

KernelScope::~KernelScope() {
  if (active_) run_after();
}

ScopedKernelHook::ScopedKernelHook(KernelHook hook) : id_(g_next_id++) {
  if (g_hooks.empty()) install(true);
  g_hooks.emplace_back(id_, std::move(hook));
}

ScopedKernelHook::~ScopedKernelHook() {
  g_hooks.erase(std::find_if(g_hooks.begin(), g_hooks.end(), [&](const auto& h) { return h.first == id_; }));
  if (g_hooks.empty()) install(false);
}

}  // namespace zeropp
