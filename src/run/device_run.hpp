// The GPU a run computes on (train.device = "cuda"), held for the whole run.
//
// For "cuda" the constructor selects this rank's GPU from its node-local rank
// (src/device/cuda_device.hpp; ranks share a GPU only with comm.device_staging),
// refuses when the device part of the run's estimated memory (MemoryCheck::split)
// does not fit in the device's free memory, creates the compute stream and a cuBLAS handle on it (TF32 per
// train.tf32) and installs them as the process's DeviceContext
// (kernels/runtime/device_context.hpp); the destructor removes it. It must therefore
// be built before the engine and the model allocate and destroyed after them
// (Run's member order). For "host" it does nothing. Every refusal is an Error
// naming train.device.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "src/comm/topology.hpp"
#include "src/config/config.hpp"
#include "src/run/preflight.hpp"

namespace zeropp {

class DeviceRun {
 public:
  DeviceRun(const Config& cfg, const Topology& topo, const MemoryCheck& memory);
  ~DeviceRun();
  DeviceRun(const DeviceRun&) = delete;
  DeviceRun& operator=(const DeviceRun&) = delete;

  // The start-up table's row: "host (CPU)", or the GPU, its cuBLAS and TF32 setting.
  std::string describe() const;

 private:
  struct Gpu;
  std::unique_ptr<Gpu> gpu_;  // null on the host
};

// Processes of one machine on each of its `devices` GPUs (at most; local
// ranks wrap around the devices).
int ranks_per_device(int ranks_on_node, int devices);

// The one-line refusal when `ranks` processes needing `need` bytes each do not
// fit in a device's `free_bytes`; nullopt when they do.
std::optional<std::string> device_memory_refusal(int64_t need, int ranks, int64_t free_bytes,
                                                 const std::string& device);

// Throws an Error naming train.device unless it is "host": `command` computes on the host only.
void require_host(const Config& cfg, const std::string& command);

}  // namespace zeropp
