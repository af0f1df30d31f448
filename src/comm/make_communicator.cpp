#include "src/comm/make_communicator.hpp"

#include "src/comm/mpi/mpi_communicator.hpp"
#include "src/comm/staging_communicator.hpp"
#ifdef ZEROPP_HAVE_CUDA
#include "src/comm/nccl/nccl_communicator.hpp"
#include "src/device/cuda_device.hpp"
#include "src/device/cuda_stager.hpp"
#endif

namespace zeropp {

CommAbilities comm_abilities(bool device_buffers) {
  CommAbilities can;
  can.device_buffers = device_buffers;
#ifdef ZEROPP_HAVE_CUDA
  can.cuda_build = true;
  can.devices = cuda::device_count(&can.no_device);
#endif
  return can;
}

CommBackend resolve_comm_backend(CommBackend requested, const CommAbilities& can) {
  if (requested == CommBackend::Mpi) return CommBackend::Mpi;
  if (requested == CommBackend::Auto)
    return can.cuda_build && can.devices > 0 && can.device_buffers ? CommBackend::Nccl : CommBackend::Mpi;
  const std::string what = "comm.backend = \"nccl\": ";
  if (!can.cuda_build) throw Error(what + "this build has no CUDA (configure with -DZEROPP_ENABLE_CUDA=ON)");
  if (can.devices == 0) throw Error(what + "no CUDA device: " + can.no_device);
  if (!can.device_buffers)
    throw Error(what + "the engine's buffers are in host memory; NCCL needs device buffers (use \"mpi\")");
  return CommBackend::Nccl;
}

void check_device_staging(bool staging, CommBackend backend, const CommAbilities& can) {
  if (!staging) return;
  const std::string what = "comm.device_staging = true: ";
  if (!can.cuda_build) throw Error(what + "this build has no CUDA (configure with -DZEROPP_ENABLE_CUDA=ON)");
  if (can.devices == 0) throw Error(what + "no CUDA device: " + can.no_device);
  if (backend != CommBackend::Mpi)
    throw Error(what + "stages device buffers for the mpi backend, but comm.backend = \"" +
                deck_name(backend) + "\" (use \"mpi\" or \"auto\")");
}

namespace {

std::unique_ptr<Communicator> make_backend(CommBackend requested, const Topology& topo, double timeout_s,
                                           bool device_buffers, bool device_staging,
                                           const EmulatedLinks& links) {
  const CommAbilities can = comm_abilities(device_buffers);
  // Staging is for the mpi backend: auto means mpi then, and any other choice is refused first.
  const CommBackend wanted = device_staging && requested == CommBackend::Auto ? CommBackend::Mpi : requested;
  check_device_staging(device_staging, wanted, can);
  // Refuses what cannot run; without CUDA only mpi can, so only CUDA builds look at the answer.
  [[maybe_unused]] const CommBackend backend = resolve_comm_backend(wanted, can);
#ifdef ZEROPP_HAVE_CUDA
  if (backend == CommBackend::Nccl) {
    try {
      cuda::select_device(topo.host_local, topo.host_ranks);
    } catch (const cuda::DeviceError& e) {
      throw Error("comm.backend = \"nccl\": " + std::string(e.what()));
    }
    return std::make_unique<NcclCommunicator>(topo.rank, timeout_s, links);
  }
  if (device_staging)
    return std::make_unique<StagingCommunicator>(
        std::make_unique<MpiCommunicator>(topo.rank, timeout_s, links),
        std::make_unique<cuda::PinnedStager>(), topo.rank, timeout_s);
#endif
  return std::make_unique<MpiCommunicator>(topo.rank, timeout_s, links);
}

}  // namespace

std::unique_ptr<Communicator> make_communicator(CommBackend requested, const Topology& topo, double timeout_s,
                                                bool device_buffers, bool device_staging,
                                                const EmulatedLinks& links) {
  std::unique_ptr<Communicator> c =
      make_backend(requested, topo, timeout_s, device_buffers, device_staging, links);
  // Emulated nodes share one host name: the watchdog numbers them instead.
  c->set_nodes(topo.X, topo.emulated ? std::vector<std::string>{} : topo.hosts);
  return c;
}

}  // namespace zeropp
