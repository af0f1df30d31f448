#include "src/zero/kernel_progress.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include "kernels/runtime/kernel_hooks.hpp"

namespace zeropp {

namespace {

std::vector<const std::function<void()>*> g_polls;  // the live KernelProgress objects
bool g_polling = false;                             // inside a poll: kernels it runs do not poll
std::unique_ptr<ScopedKernelHook> g_hook;           // registered while any object lives

void poll_all() {
  if (g_polling) return;
  g_polling = true;
  for (const auto* p : g_polls) (*p)();
  g_polling = false;
}
}  // namespace

KernelProgress::KernelProgress(std::function<void()> poll) : poll_(std::move(poll)) {
  if (g_polls.empty()) g_hook = std::make_unique<ScopedKernelHook>(KernelHook{nullptr, poll_all});
  g_polls.push_back(&poll_);
}

KernelProgress::~KernelProgress() {
  g_polls.erase(std::find(g_polls.begin(), g_polls.end(), &poll_));
  if (g_polls.empty()) g_hook.reset();
}

}  // namespace zeropp
