#include "src/comm/nccl/nccl_backend.hpp"

#include <sched.h>
#include <unistd.h>

#include <cstdio>

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

using Clock = std::chrono::steady_clock;

namespace {
int mod(int a, int p) { return ((a % p) + p) % p; }
}  // namespace

// --- groups ------------------------------------------------------------------

NcclGroup::NcclGroup(const Group& g) : size_(g.size()), rank_(g.rank()), name_(g.name()) {
  for (int m = 0; m < size_; ++m) same_node_.push_back(g.same_node(m));
  ncclUniqueId id{};
  if (rank_ == 0) ZCHECK_NCCL(ncclGetUniqueId(&id));
  ZCHECK_MPI(MPI_Bcast(&id, int(sizeof id), MPI_BYTE, 0, g.comm()));
  ZCHECK_NCCL(ncclCommInitRank(&comm_, size_, id, rank_));
}

NcclGroup::~NcclGroup() {
  if (comm_) ncclCommDestroy(comm_);
}

// --- requests ----------------------------------------------------------------

NcclRequest::NcclRequest(NcclRequest&& o) noexcept
    : done_(o.done_),
      kind_(o.kind_),
      purpose_(o.purpose_),
      label_(std::move(o.label_)),
      step_(o.step_),
      t0_(o.t0_) {
  o.done_ = nullptr;
}

NcclRequest& NcclRequest::operator=(NcclRequest&& o) noexcept {
  if (this != &o) {
    if (done_) cudaEventDestroy(done_);
    done_ = o.done_;
    o.done_ = nullptr;
    kind_ = o.kind_;
    purpose_ = o.purpose_;
    label_ = std::move(o.label_);
    step_ = o.step_;
    t0_ = o.t0_;
  }
  return *this;
}

// Destroying an event whose work is still pending is allowed: CUDA releases it on completion.
NcclRequest::~NcclRequest() {
  if (done_) cudaEventDestroy(done_);
}

// --- communicator ------------------------------------------------------------

NcclCommunicator::NcclCommunicator(int world_rank, double timeout_s)
    : world_rank_(world_rank), timeout_s_(timeout_s) {
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

void NcclCommunicator::begin(NcclGroup&, cudaStream_t producer) {
  ZCHECK_CUDA(cudaEventRecord(ready_, producer));
  ZCHECK_CUDA(cudaStreamWaitEvent(stream_, ready_, 0));
}

NcclRequest NcclCommunicator::finish(Kind kind, Purpose purpose, const std::string& label) {
  NcclRequest r;
  ZCHECK_CUDA(cudaEventCreateWithFlags(&r.done_, cudaEventDisableTiming));
  ZCHECK_CUDA(cudaEventRecord(r.done_, stream_));
  r.kind_ = kind;
  r.purpose_ = purpose;
  r.label_ = label;
  r.step_ = step_;
  r.t0_ = Clock::now();
  return r;
}

void NcclCommunicator::account(NcclGroup& g, Kind kind, Purpose purpose, int member, int64_t bytes) {
  ByteCounters::Bytes& b = counters_.at(kind, purpose);
  (g.same_node(member) ? b.intra : b.inter) += bytes;
}

// p-1 hops to member i+1: the ring all-gather / reduce-scatter of the MPI backend.
void NcclCommunicator::account_ring(NcclGroup& g, Kind kind, Purpose purpose, int64_t bytes_per_hop) {
  const int p = g.size();
  if (p > 1) account(g, kind, purpose, mod(g.rank() + 1, p), int64_t(p - 1) * bytes_per_hop);
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

NcclRequest NcclCommunicator::start_allgather(NcclGroup& g, const void* send, void* recv, int64_t count,
                                              DType dtype, Purpose purpose, const std::string& label,
                                              cudaStream_t producer) {
  const int64_t b = bytes_of(dtype, count);
  begin(g, producer);
  ZCHECK_NCCL(ncclAllGather(send, recv, size_t(b), ncclUint8, g.comm(), stream_));
  account_ring(g, Kind::AllGather, purpose, b);
  return finish(Kind::AllGather, purpose, label);
}

NcclRequest NcclCommunicator::start_reduce_scatter(NcclGroup& g, const float* in, float* out, int64_t n,
                                                   DType wire, Purpose purpose, const std::string& label,
                                                   cudaStream_t producer) {
  if (wire != DType::F32 && wire != DType::BF16)
    throw Error(std::string("nccl communicator: reduce-scatter wire dtype must be f32 or bf16, got ") +
                name_of(wire));
  const int p = g.size(), r = g.rank();
  const int64_t wb = bytes_of(wire, n);
  begin(g, producer);
  if (p == 1) {
    if (out != in) ZCHECK_CUDA(cudaMemcpyAsync(out, in, size_t(n) * 4, cudaMemcpyDeviceToDevice, stream_));
    return finish(Kind::ReduceScatter, purpose, label);
  }
  auto* acc = static_cast<float*>(scratch(0, size_t(n) * 4));
  void* wire_out = scratch(1, size_t(wb));
  void* wire_in = scratch(2, size_t(wb));
  // Hop k sends the partial sum of block r-k-1 and receives that of block r-k-2
  // (src/comm/communicator.cpp's ReduceScatterOp, hop for hop).
  for (int k = 0; k < p - 1; ++k) {
    const float* partial = k == 0 ? in + int64_t(mod(r - 1, p)) * n : acc;
    const void* payload = partial;
    if (wire == DType::BF16) {
      cuda::to_bf16(partial, static_cast<uint16_t*>(wire_out), n, stream_);
      payload = wire_out;
    }
    ZCHECK_NCCL(ncclGroupStart());
    ZCHECK_NCCL(ncclSend(payload, size_t(wb), ncclUint8, mod(r + 1, p), g.comm(), stream_));
    ZCHECK_NCCL(ncclRecv(wire_in, size_t(wb), ncclUint8, mod(r - 1, p), g.comm(), stream_));
    ZCHECK_NCCL(ncclGroupEnd());
    const float* own = in + int64_t(mod(r - k - 2, p)) * n;
    // The last hop completes block r: write it to out directly (out may be block r of in:
    // each element is read before it is written).
    cuda::ring_accumulate(wire_in, wire == DType::BF16, own, k == p - 2 ? out : acc, n, stream_);
  }
  account_ring(g, Kind::ReduceScatter, purpose, wb);
  return finish(Kind::ReduceScatter, purpose, label);
}

NcclRequest NcclCommunicator::start_alltoall(NcclGroup& g, const void* send, void* recv, int64_t count,
                                             DType dtype, Purpose purpose, const std::string& label,
                                             cudaStream_t producer) {
  const int p = g.size(), r = g.rank();
  const int64_t b = bytes_of(dtype, count);
  const auto* src = static_cast<const char*>(send);
  auto* dst = static_cast<char*>(recv);
  begin(g, producer);
  ZCHECK_CUDA(cudaMemcpyAsync(dst + r * b, src + r * b, size_t(b), cudaMemcpyDeviceToDevice, stream_));
  if (p > 1) {
    ZCHECK_NCCL(ncclGroupStart());
    for (int k = 0; k < p - 1; ++k) {
      const int to = mod(r + k + 1, p), from = mod(r - k - 1, p);
      ZCHECK_NCCL(ncclSend(src + to * b, size_t(b), ncclUint8, to, g.comm(), stream_));
      ZCHECK_NCCL(ncclRecv(dst + from * b, size_t(b), ncclUint8, from, g.comm(), stream_));
      account(g, Kind::AllToAll, purpose, to, b);
    }
    ZCHECK_NCCL(ncclGroupEnd());
  }
  return finish(Kind::AllToAll, purpose, label);
}

NcclRequest NcclCommunicator::start_broadcast(NcclGroup& g, void* data, int64_t bytes, int root,
                                              Purpose purpose, const std::string& label,
                                              cudaStream_t producer) {
  const int p = g.size();
  if (root < 0 || root >= p)
    throw Error("nccl communicator: broadcast root " + std::to_string(root) + " not in group");
  begin(g, producer);
  if (p > 1) ZCHECK_NCCL(ncclBroadcast(data, data, size_t(bytes), ncclUint8, root, g.comm(), stream_));
  if (g.rank() == root)
    for (int m = 0; m < p; ++m)
      if (m != root) account(g, Kind::Broadcast, purpose, m, bytes);
  return finish(Kind::Broadcast, purpose, label);
}

template <class T>
NcclRequest NcclCommunicator::allreduce_impl(NcclGroup& g, T* values, int64_t n, Purpose purpose,
                                             const std::string& label, cudaStream_t producer) {
  const int p = g.size();
  const int64_t b = int64_t(sizeof(T)) * n;
  begin(g, producer);
  auto* all = static_cast<T*>(scratch(0, size_t(p) * size_t(b)));
  ZCHECK_NCCL(ncclAllGather(values, all, size_t(b), ncclUint8, g.comm(), stream_));
  cuda::sum_members(all, p, values, n, stream_);
  account_ring(g, Kind::AllReduce, purpose, b);
  return finish(Kind::AllReduce, purpose, label);
}

NcclRequest NcclCommunicator::start_allreduce_sum(NcclGroup& g, float* values, int64_t n, Purpose purpose,
                                                  const std::string& label, cudaStream_t producer) {
  return allreduce_impl(g, values, n, purpose, label, producer);
}

NcclRequest NcclCommunicator::start_allreduce_sum(NcclGroup& g, double* values, int64_t n, Purpose purpose,
                                                  const std::string& label, cudaStream_t producer) {
  return allreduce_impl(g, values, n, purpose, label, producer);
}

void NcclCommunicator::wait_on(const NcclRequest& r, cudaStream_t consumer) {
  if (r.done_) ZCHECK_CUDA(cudaStreamWaitEvent(consumer, r.done_, 0));
}

bool NcclCommunicator::test(NcclRequest& r) {
  if (!r.done_) return true;
  const cudaError_t e = cudaEventQuery(r.done_);
  if (e == cudaErrorNotReady) return false;
  ZCHECK_CUDA(e);
  cudaEventDestroy(r.done_);
  r.done_ = nullptr;
  return true;
}

void NcclCommunicator::wait_host(NcclRequest& r) {
  if (!r.done_) return;
  const auto entered = Clock::now();
  const Kind kind = r.kind_;
  while (!test(r)) {
    if (std::chrono::duration<double>(Clock::now() - r.t0_).count() > timeout_s_) {
      std::fprintf(
          stderr,
          "zeropp: rank %d: %s (%s) of unit '%s' at step %lld did not complete within %g s; aborting\n",
          world_rank_, name_of(r.kind_), name_of(r.purpose_), r.label_.c_str(), (long long)r.step_,
          timeout_s_);
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, kExitError);
    }
    if (Clock::now() - entered < std::chrono::milliseconds(1))
      sched_yield();
    else
      usleep(50);
  }
  counters_.seconds[size_t(kind)] += std::chrono::duration<double>(Clock::now() - entered).count();
}

}  // namespace zeropp
