// The communicator backend of a run (config key comm.backend):
//   mpi   host buffers, MPI point-to-point (src/comm/mpi); every build.
//   nccl  device buffers, NCCL (src/comm/nccl); needs a CUDA build
//         (ZEROPP_ENABLE_CUDA), a CUDA device per rank of a node, and buffers
//         in device memory.
//   auto  nccl where all three hold, else mpi. The engine's buffers are host
//         memory today, so auto is mpi.
// A backend that cannot run is refused with one line naming comm.backend and
// its value; never a silent fallback.
// comm.device_staging = true wraps the mpi backend in a StagingCommunicator
// (src/comm/staging_communicator.hpp) that copies the engine's device buffers
// through pinned host memory: for sites without CUDA-aware MPI and for
// several ranks sharing one GPU (where NCCL refuses). It needs a CUDA build
// and a device, and the mpi backend (auto then resolves to mpi).
#pragma once

#include <memory>
#include <string>

#include "src/base/comm_backend.hpp"
#include "src/comm/communicator.hpp"
#include "src/comm/link_emulator.hpp"
#include "src/comm/topology.hpp"

namespace zeropp {

// What the machine offers a backend.
struct CommAbilities {
  bool cuda_build = false;      // compiled with ZEROPP_ENABLE_CUDA
  int devices = 0;              // visible CUDA devices
  std::string no_device;        // why there are none (the CUDA runtime's answer)
  bool device_buffers = false;  // the caller's buffers live in device memory
};
CommAbilities comm_abilities(bool device_buffers);  // this build and machine

// Mpi or Nccl for comm.backend = requested; throws Error when it cannot run. Pure.
CommBackend resolve_comm_backend(CommBackend requested, const CommAbilities& can);

// comm.device_staging = staging over comm.backend (auto counting as mpi): throws Error (one
// line naming the key) when it cannot run. Pure.
void check_device_staging(bool staging, CommBackend backend, const CommAbilities& can);

// The communicator for comm.backend = requested (and comm.device_staging =
// device_staging), its messages over `links` (comm.internode_gbps and friends;
// off by default); with nccl, selects this rank's device (local rank of topo.X
// per node) first.
std::unique_ptr<Communicator> make_communicator(CommBackend requested, const Topology& topo, double timeout_s,
                                                bool device_buffers, bool device_staging = false,
                                                const EmulatedLinks& links = {});

}  // namespace zeropp
