#include "src/comm/nccl/nccl_communicator.hpp"

#include <nccl.h>

#include "kernels/cuda/comm_kernels.cuh"
#include "src/base/errors.hpp"

#define ZCHECK_CUDA(call)                                                                               \
  do {                                                                                                  \
    const cudaError_t zeropp_e_ = (call);                                                               \
    if (zeropp_e_ != cudaSuccess)                                                                       \
      ::zeropp::fatal(#call, __FILE__, __LINE__,                                                        \
                      std::string(cudaGetErrorName(zeropp_e_)) + ": " + cudaGetErrorString(zeropp_e_)); \
  } while (0)

#define ZCHECK_NCCL(call)                                                                     \
  do {                                                                                        \
    const ncclResult_t zeropp_r_ = (call);                                                    \
    if (zeropp_r_ != ncclSuccess && zeropp_r_ != ncclInProgress)                              \
      ::zeropp::fatal(#call, __FILE__, __LINE__, std::string(ncclGetErrorString(zeropp_r_))); \
  } while (0)

namespace zeropp {

using Clock = Request::Clock;

namespace {

int mod(int a, int p) { return ((a % p) + p) % p; }

// The ncclComm of a Group, attached to it on its first NCCL collective.
struct NcclGroup : Group::Attachment {
  explicit NcclGroup(const Group& g) {
    ncclUniqueId id{};
    if (g.rank() == 0) ZCHECK_NCCL(ncclGetUniqueId(&id));
    ZCHECK_MPI(MPI_Bcast(&id, int(sizeof id), MPI_BYTE, 0, g.comm()));
    ZCHECK_NCCL(ncclCommInitRank(&comm, g.size(), id, g.rank()));
  }
  ~NcclGroup() override {
    if (comm) ncclCommDestroy(comm);
  }
  ncclComm_t comm = nullptr;
};

ncclComm_t nccl_comm(Group& g) {
  if (!g.attachment()) g.attach(std::make_unique<NcclGroup>(g));
  auto* a = dynamic_cast<NcclGroup*>(g.attachment());
  if (!a) throw Error("nccl communicator: group '" + g.name() + "' carries another backend's state");
  return a->comm;
}

// An enqueued collective: its completion event, and the emulated link's end.
struct NcclState : Request::State {
  NcclState(Communicator& c, Kind k, Purpose pu, const std::string& l, Clock::duration link)
      : State(c, k, pu, l), not_before(t0 + link) {}
  // Destroying an event whose work is still pending is allowed: CUDA releases it on completion.
  ~NcclState() override {
    if (done) cudaEventDestroy(done);
  }
  bool advance() override {
    if (done) {
      const cudaError_t e = cudaEventQuery(done);
      if (e == cudaErrorNotReady) return false;
      ZCHECK_CUDA(e);
      cudaEventDestroy(done);
      done = nullptr;
    }
    return Clock::now() >= not_before;
  }
  cudaEvent_t done = nullptr;
  Clock::time_point not_before;
};

}  // namespace

NcclCommunicator::NcclCommunicator(int world_rank, double timeout_s) : Communicator(world_rank, timeout_s) {
  ZCHECK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  ZCHECK_CUDA(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming));
}

NcclCommunicator::~NcclCommunicator() {
  for (void* p : scratch_)
    if (p) cudaFreeAsync(p, stream_);
  if (stream_) cudaStreamSynchronize(stream_);
  if (ready_) cudaEventDestroy(ready_);
  if (stream_) cudaStreamDestroy(stream_);
}

// The communication stream waits for the inputs' producers (the default stream);
// returns the inter-node bytes counted so far, for the emulated link.
int64_t NcclCommunicator::begin(Kind kind, Purpose purpose) {
  ZCHECK_CUDA(cudaEventRecord(ready_, nullptr));
  ZCHECK_CUDA(cudaStreamWaitEvent(stream_, ready_, 0));
  return counters().at(kind, purpose).inter;
}

std::unique_ptr<Request::State> NcclCommunicator::finish(Kind kind, Purpose purpose, const std::string& label,
                                                         int64_t inter_before) {
  auto s = std::make_unique<NcclState>(*this, kind, purpose, label,
                                       emulated_link_time(counters().at(kind, purpose).inter - inter_before));
  ZCHECK_CUDA(cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming));
  ZCHECK_CUDA(cudaEventRecord(s->done, stream_));
  return s;
}

// p-1 hops to member i+1: the ring all-gather / reduce-scatter of the MPI backend.
void NcclCommunicator::account_ring(const Group& g, Kind kind, Purpose purpose, int64_t bytes_per_hop) {
  const int p = g.size();
  if (p > 1) count_sent(g, mod(g.rank() + 1, p), kind, purpose, int64_t(p - 1) * bytes_per_hop);
}

// Stream-ordered scratch: growing it never syncs the host.
void* NcclCommunicator::scratch(int slot, size_t bytes) {
  if (scratch_bytes_[slot] < bytes) {
    if (scratch_[slot]) ZCHECK_CUDA(cudaFreeAsync(scratch_[slot], stream_));
    ZCHECK_CUDA(cudaMallocAsync(&scratch_[slot], bytes, stream_));
    scratch_bytes_[slot] = bytes;
  }
  return scratch_[slot];
}

std::unique_ptr<Request::State> NcclCommunicator::post_allgather(Group& g, const void* send, void* recv,
                                                                 int64_t b, Purpose purpose,
                                                                 const std::string& label) {
  ncclComm_t c = nccl_comm(g);
  const int64_t inter0 = begin(Kind::AllGather, purpose);
  if (b > 0) ZCHECK_NCCL(ncclAllGather(send, recv, size_t(b), ncclUint8, c, stream_));
  account_ring(g, Kind::AllGather, purpose, b);
  return finish(Kind::AllGather, purpose, label, inter0);
}

std::unique_ptr<Request::State> NcclCommunicator::post_reduce_scatter(Group& g, const float* in, float* out,
                                                                      int64_t n, DType wire, Purpose purpose,
                                                                      const std::string& label) {
  ncclComm_t c = nccl_comm(g);
  const int p = g.size(), r = g.rank();
  const int64_t wb = bytes_of(wire, n);
  const int64_t inter0 = begin(Kind::ReduceScatter, purpose);
  if (p == 1 || n == 0) {
    if (out != in && n > 0)
      ZCHECK_CUDA(cudaMemcpyAsync(out, in, size_t(n) * 4, cudaMemcpyDeviceToDevice, stream_));
    account_ring(g, Kind::ReduceScatter, purpose, wb);
    return finish(Kind::ReduceScatter, purpose, label, inter0);
  }
  auto* acc = static_cast<float*>(scratch(0, size_t(n) * 4));
  void* wire_out = scratch(1, size_t(wb));
  void* wire_in = scratch(2, size_t(wb));
  // Hop k sends the partial sum of block r-k-1 and receives that of block r-k-2
  // (the MPI backend's ReduceScatterOp, hop for hop).
  for (int k = 0; k < p - 1; ++k) {
    const float* partial = k == 0 ? in + int64_t(mod(r - 1, p)) * n : acc;
    const void* payload = partial;
    if (wire == DType::BF16) {
      cuda::to_bf16(partial, static_cast<uint16_t*>(wire_out), n, stream_);
      payload = wire_out;
    }
    ZCHECK_NCCL(ncclGroupStart());
    ZCHECK_NCCL(ncclSend(payload, size_t(wb), ncclUint8, mod(r + 1, p), c, stream_));
    ZCHECK_NCCL(ncclRecv(wire_in, size_t(wb), ncclUint8, mod(r - 1, p), c, stream_));
    ZCHECK_NCCL(ncclGroupEnd());
    const float* own = in + int64_t(mod(r - k - 2, p)) * n;
    // The last hop completes block r: write it to out directly (out may be block r of in:
    // each element is read before it is written).
    cuda::ring_accumulate(wire_in, wire == DType::BF16, own, k == p - 2 ? out : acc, n, stream_);
  }
  account_ring(g, Kind::ReduceScatter, purpose, wb);
  return finish(Kind::ReduceScatter, purpose, label, inter0);
}

std::unique_ptr<Request::State> NcclCommunicator::post_alltoall(Group& g, const void* send, void* recv,
                                                                int64_t b, Purpose purpose,
                                                                const std::string& label) {
  ncclComm_t c = nccl_comm(g);
  const int p = g.size(), r = g.rank();
  const auto* src = static_cast<const char*>(send);
  auto* dst = static_cast<char*>(recv);
  const int64_t inter0 = begin(Kind::AllToAll, purpose);
  if (b > 0) {
    ZCHECK_CUDA(cudaMemcpyAsync(dst + r * b, src + r * b, size_t(b), cudaMemcpyDeviceToDevice, stream_));
    ZCHECK_NCCL(ncclGroupStart());
    for (int k = 0; k < p - 1; ++k) {
      const int to = mod(r + k + 1, p), from = mod(r - k - 1, p);
      ZCHECK_NCCL(ncclSend(src + to * b, size_t(b), ncclUint8, to, c, stream_));
      ZCHECK_NCCL(ncclRecv(dst + from * b, size_t(b), ncclUint8, from, c, stream_));
    }
    ZCHECK_NCCL(ncclGroupEnd());
  }
  for (int k = 0; k < p - 1; ++k) count_sent(g, mod(r + k + 1, p), Kind::AllToAll, purpose, b);
  return finish(Kind::AllToAll, purpose, label, inter0);
}

std::unique_ptr<Request::State> NcclCommunicator::post_broadcast(Group& g, void* data, int64_t bytes,
                                                                 int root, Purpose purpose,
                                                                 const std::string& label) {
  ncclComm_t c = nccl_comm(g);
  const int p = g.size();
  const int64_t inter0 = begin(Kind::Broadcast, purpose);
  if (p > 1 && bytes > 0) ZCHECK_NCCL(ncclBroadcast(data, data, size_t(bytes), ncclUint8, root, c, stream_));
  if (g.rank() == root)
    for (int m = 0; m < p; ++m)
      if (m != root) count_sent(g, m, Kind::Broadcast, purpose, bytes);
  return finish(Kind::Broadcast, purpose, label, inter0);
}

template <class T>
std::unique_ptr<Request::State> NcclCommunicator::allreduce_impl(Group& g, T* values, int64_t n,
                                                                 Purpose purpose, const std::string& label) {
  ncclComm_t c = nccl_comm(g);
  const int p = g.size();
  const int64_t b = int64_t(sizeof(T)) * n;
  const int64_t inter0 = begin(Kind::AllReduce, purpose);
  if (b > 0) {
    auto* all = static_cast<T*>(scratch(0, size_t(p) * size_t(b)));
    ZCHECK_NCCL(ncclAllGather(values, all, size_t(b), ncclUint8, c, stream_));
    cuda::sum_members(all, p, values, n, stream_);
  }
  account_ring(g, Kind::AllReduce, purpose, b);
  return finish(Kind::AllReduce, purpose, label, inter0);
}

std::unique_ptr<Request::State> NcclCommunicator::post_allreduce_sum(Group& g, float* values, int64_t n,
                                                                     Purpose purpose,
                                                                     const std::string& label) {
  return allreduce_impl(g, values, n, purpose, label);
}

std::unique_ptr<Request::State> NcclCommunicator::post_allreduce_sum(Group& g, double* values, int64_t n,
                                                                     Purpose purpose,
                                                                     const std::string& label) {
  return allreduce_impl(g, values, n, purpose, label);
}

}  // namespace zeropp
