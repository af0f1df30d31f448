// NCCL backend of the Communicator (src/comm/communicator.hpp): device
// buffers, the MPI backend's schedules where they fix the arithmetic, and the
// same byte accounting. Compiled only with ZEROPP_ENABLE_CUDA (zeropp_cuda).
//
// Groups: on a group's first collective, member 0 creates an ncclUniqueId,
// MPI_Bcast over g.comm() hands it to the others and ncclCommInitRank joins
// them; the ncclComm is attached to the Group and lives as long as it. So
// every rank must reach the first collective of its groups in the same order
// (true when every rank runs the same collectives), after the device was
// chosen (make_communicator calls src/device/cuda_device.hpp's select_device).
//
// Streams and events: all communication runs on one non-blocking stream per
// communicator. A collective first makes that stream wait for the work
// enqueued so far on the compute stream (kernels/runtime/device_context.hpp's
// compute_stream: the context's, which wrote the inputs), enqueues its
// work and records a completion event; test() polls the event, wait() blocks
// with the interface's watchdog. Results are ready on the host's terms after
// test() returned true or wait() returned.
//
// Schedules and arithmetic (identical bits to the MPI backend):
//   all-gather      ncclAllGather (NCCL's ring moves the same (p-1)·b per rank).
//   reduce-scatter  the MPI backend's ring, hop by hop: ncclSend/ncclRecv of
//                   the partial sum to member i+1 in one NCCL group, then an
//                   fp32 add kernel (kernels/cuda/comm_kernels.cuh); with BF16
//                   each partial is rounded to nearest even before the hop.
//   all-to-all      all p-1 pairwise ncclSend/ncclRecv in one NCCL group.
//   all-reduce      ncclAllGather of every member's n values, then a kernel
//                   sums them in member order: identical bits on every rank.
//   broadcast       ncclBroadcast.
// Byte accounting: the MPI backend's closed forms (src/comm/mpi/mpi_communicator.hpp),
// counted when the collective is enqueued. NCCL's own algorithms (trees,
// NVLS, ...) may put a different number of bytes on particular links, which
// NCCL does not report. Emulated links (src/comm/link_emulator.hpp): a collective
// completes no earlier than the inter-node link has served its inter-node bytes.
//
// Buffers are device pointers that must stay valid until the collective has
// completed. Scratch for reduce-scatter and all-reduce is stream-ordered
// (cudaMallocAsync on the communication stream).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "src/comm/communicator.hpp"
#include "src/comm/link_emulator.hpp"

namespace zeropp {

class NcclCommunicator final : public Communicator {
 public:
  explicit NcclCommunicator(int world_rank, double timeout_s = 600, EmulatedLinks links = {});
  ~NcclCommunicator() override;

  const char* backend() const override { return "nccl"; }
  cudaStream_t stream() const { return stream_; }

 protected:
  std::unique_ptr<Request::State> post(Group& g, const Collective& c) override;

 private:
  void begin();
  std::unique_ptr<Request::State> finish(Kind kind, Purpose purpose, const std::string& label);
  // count_sent(), and the collective's inter-node bytes for the emulated link.
  void sent(const Group& g, int to, Kind kind, Purpose purpose, int64_t bytes);
  void account_ring(const Group& g, Kind kind, Purpose purpose, int64_t bytes_per_hop);
  void* scratch(int slot, size_t bytes);
  // Enqueue the collective's work on the communication stream.
  void enqueue_reduce_scatter(Group& g, const Collective& c);
  void enqueue_alltoall(Group& g, const Collective& c);
  template <class T>
  void enqueue_allreduce(Group& g, T* values, int64_t n);

  EmulatedLinks links_;
  int64_t inter_bytes_ = 0;  // sent across nodes by the collective being posted
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ready_ = nullptr;
  void* scratch_[3] = {nullptr, nullptr, nullptr};
  size_t scratch_bytes_[3] = {0, 0, 0};
};

}  // namespace zeropp
