// NCCL communicator backend: the collectives of src/comm/communicator.hpp on device
// buffers, over NCCL, with the MPI backend's schedules, sums and byte accounting.
//
// STATUS: standalone. It is compiled into zeropp_cuda (ZEROPP_ENABLE_CUDA) but
// not yet wired into the engine, which still runs src/comm/communicator.hpp on host
// buffers; wiring it in needs device-resident parameters (a CUDA-enabled Kokkos).
//
// Groups: NcclGroup(g) makes one ncclComm per zeropp::Group (world, node,
// cross-node, hpZ, ...): member 0 creates the ncclUniqueId, MPI_Bcast over
// g.comm() hands it to the others, ncclCommInitRank joins them. Collective over
// g's members; every rank must create its groups in the same order, after
// select_device() (src/device/cuda_device.hpp) has chosen this rank's GPU.
//
// Streams and events: all communication runs on one dedicated non-blocking
// stream per NcclCommunicator. start_*() makes that stream wait for an event
// recorded on `producer` (the compute stream that wrote the inputs), enqueues
// the collective and records a completion event in the returned request;
// wait_on(r, consumer) makes `consumer` wait for that event. No host sync
// anywhere on that path. test() polls the event; wait_host() blocks the host
// (for host consumers only) with the MPI backend's watchdog: after timeout_s
// it prints the same one-line message and aborts the job.
//
// Schedules and arithmetic (identical bits to the MPI backend):
//   all-gather      ncclAllGather (NCCL's ring moves the same (p-1)·b per rank).
//   reduce-scatter  the MPI backend's ring, hop by hop: ncclSend/ncclRecv of
//                   the partial sum to member i+1 in one NCCL group, then an
//                   fp32 add kernel (kernels/cuda/comm_kernels.cuh); with BF16
//                   each partial is rounded to nearest even before the hop.
//                   Block s is summed x[s+1] + x[s+2] + ... + x[s], as on MPI.
//   all-to-all      all p-1 pairwise ncclSend/ncclRecv in one NCCL group.
//   all-reduce      ncclAllGather of every member's n values, then a kernel
//                   sums them in member order: identical bits on every rank.
//   broadcast       ncclBroadcast.
// Byte accounting: the closed forms of src/comm/communicator.hpp, into the same
// ByteCounters (per kind and purpose, intra/inter by the receiving member's
// node), counted when the collective is enqueued. They describe the MPI
// backend's schedule; NCCL's own algorithms (trees, NVLS, ...) may put a
// different number of bytes on particular links, which NCCL does not report.
//
// Buffers are device pointers that must stay valid until the collective has
// completed on the communication stream. Scratch for reduce-scatter and
// all-reduce is stream-ordered (cudaMallocAsync on the communication stream).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "src/comm/communicator.hpp"

namespace zeropp {

class NcclGroup {
 public:
  explicit NcclGroup(const Group& g);
  ~NcclGroup();
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

  ncclComm_t comm() const { return comm_; }
  int size() const { return size_; }
  int rank() const { return rank_; }
  bool same_node(int member) const { return same_node_[size_t(member)]; }
  const std::string& name() const { return name_; }

 private:
  ncclComm_t comm_ = nullptr;
  int size_ = 1, rank_ = 0;
  std::vector<bool> same_node_;
  std::string name_;
};

class NcclCommunicator;

// An enqueued collective: its completion event. Destroying one does not wait
// (the stream keeps the order); consumers use wait_on() or wait_host().
class NcclRequest {
 public:
  NcclRequest() = default;
  NcclRequest(NcclRequest&& o) noexcept;
  NcclRequest& operator=(NcclRequest&& o) noexcept;
  ~NcclRequest();
  bool active() const { return done_ != nullptr; }

 private:
  friend class NcclCommunicator;
  cudaEvent_t done_ = nullptr;
  Kind kind_ = Kind::AllGather;
  Purpose purpose_ = Purpose::Other;
  std::string label_;
  int64_t step_ = 0;
  std::chrono::steady_clock::time_point t0_{};
};

class NcclCommunicator {
 public:
  explicit NcclCommunicator(int world_rank, double timeout_s = 600);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  cudaStream_t stream() const { return stream_; }

  // Same semantics as the Communicator functions of the same name, on device buffers.
  NcclRequest start_allgather(NcclGroup& g, const void* send, void* recv, int64_t count, DType dtype,
                              Purpose purpose, const std::string& label, cudaStream_t producer);
  NcclRequest start_reduce_scatter(NcclGroup& g, const float* in, float* out, int64_t n, DType wire,
                                   Purpose purpose, const std::string& label, cudaStream_t producer);
  NcclRequest start_alltoall(NcclGroup& g, const void* send, void* recv, int64_t count, DType dtype,
                             Purpose purpose, const std::string& label, cudaStream_t producer);
  NcclRequest start_broadcast(NcclGroup& g, void* data, int64_t bytes, int root, Purpose purpose,
                              const std::string& label, cudaStream_t producer);
  // values: n device values, summed over the group in member order.
  NcclRequest start_allreduce_sum(NcclGroup& g, float* values, int64_t n, Purpose purpose,
                                  const std::string& label, cudaStream_t producer);
  NcclRequest start_allreduce_sum(NcclGroup& g, double* values, int64_t n, Purpose purpose,
                                  const std::string& label, cudaStream_t producer);

  void wait_on(const NcclRequest& r, cudaStream_t consumer);  // device-side wait, no host sync
  bool test(NcclRequest& r);                                  // true when complete (then r is inactive)
  void wait_host(NcclRequest& r);                             // host wait, with the watchdog

  ByteCounters& counters() { return counters_; }
  const ByteCounters& counters() const { return counters_; }
  void set_step(int64_t step) { step_ = step; }
  int64_t step() const { return step_; }

 private:
  void begin(NcclGroup& g, cudaStream_t producer);
  NcclRequest finish(Kind kind, Purpose purpose, const std::string& label);
  void account(NcclGroup& g, Kind kind, Purpose purpose, int member, int64_t bytes);
  void account_ring(NcclGroup& g, Kind kind, Purpose purpose, int64_t bytes_per_hop);
  void* scratch(int slot, size_t bytes);
  template <class T>
  NcclRequest allreduce_impl(NcclGroup& g, T* values, int64_t n, Purpose purpose, const std::string& label,
                             cudaStream_t producer);

  int world_rank_;
  double timeout_s_;
  int64_t step_ = 0;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ready_ = nullptr;
  ByteCounters counters_;
  void* scratch_[3] = {nullptr, nullptr, nullptr};
  size_t scratch_bytes_[3] = {0, 0, 0};
};

}  // namespace zeropp
