#include "kernels/runtime/device_context.hpp"

#include <string>

#include "src/base/errors.hpp"

namespace zeropp {

namespace {
DeviceContext* installed = nullptr;
}

DeviceContext* device_context() { return installed; }

ScopedDeviceContext::ScopedDeviceContext(DeviceContext* ctx) {
  if (installed) throw Error("ScopedDeviceContext: a device context is already installed");
  installed = ctx;
}
ScopedDeviceContext::~ScopedDeviceContext() { installed = nullptr; }

void no_device_twin(const char* kernel) {
  throw Error(
      std::string("kernel ") + kernel +
      " has no CUDA twin: it cannot run with train.device = \"cuda\" (kernels/runtime/device_context.hpp)");
}

}  // namespace zeropp
