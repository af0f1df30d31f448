// Device selection: one GPU per rank, chosen by the rank's index on its node.
//
// Needs only the CUDA runtime (no MPI, no Kokkos): the engine calls it with
// Topology::host_local and Topology::host_ranks (the processes on this
// machine, whatever nodes zero.ranks_per_node emulates), tools/gpu_check with (0, 1).
//
//   device_count(&why)    cudaGetDeviceCount without throwing: the count, or 0
//                         with `why` set ("no CUDA driver is loaded
//                         (cudaErrorInsufficientDriver: ...)") when the driver
//                         or the devices are unusable. Never aborts, also on a
//                         machine with the toolkit and no GPU or driver.
//   device_for_local_rank pure policy: local rank x of X per node uses device x;
//                         throws DeviceError when X exceeds the visible devices
//                         (NCCL refuses two ranks of one communicator on one GPU)
//                         unless `shared` (comm.device_staging: several ranks
//                         per GPU), which gives device x mod count.
//   select_device         both, then cudaSetDevice, and the device's stream-ordered
//                         pool set to keep what it frees; returns what was chosen.
//                         Every failure is a DeviceError whose message names the
//                         rank, what was asked and what CUDA answered, and what
//                         to do (check nvidia-smi, CUDA_VISIBLE_DEVICES, ranks per node).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace zeropp::cuda {

struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct DeviceInfo {
  int ordinal = -1;  // among the visible devices (CUDA_VISIBLE_DEVICES applies)
  std::string name;  // "NVIDIA H200"
  int cc_major = 0, cc_minor = 0;
  size_t memory_bytes = 0;
  int sm_count = 0;
  std::string describe() const;  // "device 0: NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB)"
};

int device_count(std::string* why = nullptr);
int device_for_local_rank(int local_rank, int ranks_per_node, int count, bool shared = false);
DeviceInfo select_device(int local_rank, int ranks_per_node, bool shared = false);

}  // namespace zeropp::cuda
