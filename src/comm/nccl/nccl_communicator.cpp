#include "src/comm/nccl/nccl_communicator.hpp"

#include <nccl.h>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/comm_kernels.cuh"
#include "kernels/runtime/device_context.hpp"
#include "src/base/errors.hpp"

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

NcclCommunicator::NcclCommunicator(int world_rank, double timeout_s, EmulatedLinks links)
    : Communicator(world_rank, timeout_s), links_(links) {
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

// The communication stream waits for the inputs' producers (the compute stream).
void NcclCommunicator::begin() {
  ZCHECK_CUDA(cudaEventRecord(ready_, compute_stream()));
  ZCHECK_CUDA(cudaStreamWaitEvent(stream_, ready_, 0));
  inter_bytes_ = 0;
}

std::unique_ptr<Request::State> NcclCommunicator::finish(Kind kind, Purpose purpose,
                                                         const std::string& label) {
  auto s = std::make_unique<NcclState>(*this, kind, purpose, label, links_.inter_time(inter_bytes_));
  ZCHECK_CUDA(cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming));
  ZCHECK_CUDA(cudaEventRecord(s->done, stream_));
  return s;
}

// p-1 hops to member i+1: the ring all-gather / reduce-scatter of the MPI backend.
void NcclCommunicator::account_ring(const Group& g, Kind kind, Purpose purpose, int64_t bytes_per_hop) {
  const int p = g.size();
  if (p > 1) sent(g, mod(g.rank() + 1, p), kind, purpose, int64_t(p - 1) * bytes_per_hop);
}

void NcclCommunicator::sent(const Group& g, int to, Kind kind, Purpose purpose, int64_t bytes) {
  count_sent(g, to, kind, purpose, bytes);
  if (!g.same_node(to)) inter_bytes_ += bytes;
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

std::unique_ptr<Request::State> NcclCommunicator::post(Group& g, const Collective& c) {
  begin();
  const int p = g.size(), r = g.rank();
  switch (c.kind) {
    case Kind::AllGather:
      if (c.bytes > 0)
        ZCHECK_NCCL(ncclAllGather(c.in, c.out, size_t(c.bytes), ncclUint8, nccl_comm(g), stream_));
      account_ring(g, c.kind, c.purpose, c.bytes);
      break;
    case Kind::ReduceScatter:
      enqueue_reduce_scatter(g, c);
      account_ring(g, c.kind, c.purpose, bytes_of(c.wire, c.n));
      break;
    case Kind::AllToAll:
      enqueue_alltoall(g, c);
      for (int k = 0; k < p - 1; ++k) sent(g, mod(r + k + 1, p), c.kind, c.purpose, c.bytes);
      break;
    case Kind::AllReduce:
      if (c.f64)
        enqueue_allreduce(g, static_cast<double*>(c.out), c.n);
      else
        enqueue_allreduce(g, static_cast<float*>(c.out), c.n);
      account_ring(g, c.kind, c.purpose, (c.f64 ? 8 : 4) * c.n);
      break;
    case Kind::Broadcast:
      if (p > 1 && c.bytes > 0)
        ZCHECK_NCCL(ncclBroadcast(c.out, c.out, size_t(c.bytes), ncclUint8, c.root, nccl_comm(g), stream_));
      if (r == c.root)
        for (int m = 0; m < p; ++m)
          if (m != c.root) sent(g, m, c.kind, c.purpose, c.bytes);
      break;
  }
  return finish(c.kind, c.purpose, c.label);
}

void NcclCommunicator::enqueue_reduce_scatter(Group& g, const Collective& c) {
  const int p = g.size(), r = g.rank();
  const auto* in = static_cast<const float*>(c.in);
  auto* out = static_cast<float*>(c.out);
  const int64_t n = c.n, wb = bytes_of(c.wire, n);
  if (p == 1 || n == 0) {
    if (out != in && n > 0)
      ZCHECK_CUDA(cudaMemcpyAsync(out, in, size_t(n) * 4, cudaMemcpyDeviceToDevice, stream_));
    return;
  }
  ncclComm_t comm = nccl_comm(g);
  auto* acc = static_cast<float*>(scratch(0, size_t(n) * 4));
  void* wire_out = scratch(1, size_t(wb));
  void* wire_in = scratch(2, size_t(wb));
  const bool bf16 = c.wire == DType::BF16;
  // Hop k sends the partial sum of block r-k-1 and receives that of block r-k-2
  // (the MPI backend's ReduceScatterOp, hop for hop).
  for (int k = 0; k < p - 1; ++k) {
    const float* partial = k == 0 ? in + int64_t(mod(r - 1, p)) * n : acc;
    const void* payload = partial;
    if (bf16) {
      cuda::to_bf16(partial, static_cast<uint16_t*>(wire_out), n, stream_);
      payload = wire_out;
    }
    ZCHECK_NCCL(ncclGroupStart());
    ZCHECK_NCCL(ncclSend(payload, size_t(wb), ncclUint8, mod(r + 1, p), comm, stream_));
    ZCHECK_NCCL(ncclRecv(wire_in, size_t(wb), ncclUint8, mod(r - 1, p), comm, stream_));
    ZCHECK_NCCL(ncclGroupEnd());
    const float* own = in + int64_t(mod(r - k - 2, p)) * n;
    // The last hop completes block r: write it to out directly (out may be block r of in:
    // each element is read before it is written).
    cuda::ring_accumulate(wire_in, bf16, own, k == p - 2 ? out : acc, n, stream_);
  }
}

void NcclCommunicator::enqueue_alltoall(Group& g, const Collective& c) {
  const int p = g.size(), r = g.rank();
  const int64_t b = c.bytes;
  if (b == 0) return;
  const auto* src = static_cast<const char*>(c.in);
  auto* dst = static_cast<char*>(c.out);
  ZCHECK_CUDA(cudaMemcpyAsync(dst + r * b, src + r * b, size_t(b), cudaMemcpyDeviceToDevice, stream_));
  ncclComm_t comm = nccl_comm(g);
  ZCHECK_NCCL(ncclGroupStart());
  for (int k = 0; k < p - 1; ++k) {
    const int to = mod(r + k + 1, p), from = mod(r - k - 1, p);
    ZCHECK_NCCL(ncclSend(src + to * b, size_t(b), ncclUint8, to, comm, stream_));
    ZCHECK_NCCL(ncclRecv(dst + from * b, size_t(b), ncclUint8, from, comm, stream_));
  }
  ZCHECK_NCCL(ncclGroupEnd());
}

// An all-gather of every member's values, then their sum in member order.
template <class T>
void NcclCommunicator::enqueue_allreduce(Group& g, T* values, int64_t n) {
  if (n == 0) return;
  const int64_t b = int64_t(sizeof(T)) * n;
  auto* all = static_cast<T*>(scratch(0, size_t(g.size()) * size_t(b)));
  ZCHECK_NCCL(ncclAllGather(values, all, size_t(b), ncclUint8, nccl_comm(g), stream_));
  cuda::sum_members(all, g.size(), values, n, stream_);
}

}  // namespace zeropp
