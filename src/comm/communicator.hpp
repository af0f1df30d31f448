// Communicator: the collectives of the ZeRO engines, with every byte accounted.
//
// MPI's own collectives use internal algorithms we cannot see, so each one
// here is built from point-to-point messages whose destinations are known;
// each rank counts the bytes it SENDS, split by whether the receiver is on its
// own node (intra) or another (inter), per collective kind and purpose.
//
// Algorithms and closed-form bytes sent per rank i, for a group of p members
// (group rank order = world order, node-major) and b = bytes of one slice
// (a unit of U = p·b bytes):
//   all-gather      ring to member (i+1) mod p, p−1 hops: (p−1)·b = (p−1)/p·U,
//                   all inter when member i+1 is on another node, else all intra.
//                   World group, Y > 1 nodes: only local rank X−1 crosses a node
//                   boundary, so the job sends Y·(p−1)·b ≈ one unit per node
//                   across nodes. Node group: all intra; cross group: all inter.
//   reduce-scatter  ring, p−1 hops, each sending one partial-sum slice of n
//                   elements in the wire dtype: (p−1)·n·sizeof(wire), split as
//                   for all-gather. Block s is summed in the order
//                   x[s+1] + x[s+2] + ... + x[s] (indices mod p), accumulating in fp32;
//                   with BF16 each partial is rounded to nearest even before each hop.
//   all-to-all      pairwise: at hop k = 1..p−1 send block (i+k) mod p to member
//                   (i+k) mod p: (p−1)·b; on the world group (X−1)·b intra and
//                   (p−X)·b inter.
//   all-reduce      (small values) ring all-gather of every member's n values,
//                   then each rank sums them in member order: (p−1)·n·sizeof(T),
//                   split as for all-gather; bitwise identical on every rank.
//   broadcast       the root sends to each other member directly: (p−1)·b from
//                   the root (intra to its node's members, inter to the rest), 0
//                   from the others.
// Self-copies are not counted. Messages are split into pieces of at most
// max_message_bytes, so buffers beyond INT_MAX bytes work.
//
// Nonblocking: start_*() returns a Request that test() advances without
// blocking and wait() completes; the group and buffers must outlive it. Every
// member must start the collectives of a group in the same order. wait() polls
// with sched_yield/short sleeps and aborts the job with one line naming rank,
// collective, purpose, unit and step when a collective has not finished
// timeout_s after it started.
//
// Backend seam: each collective is a state machine of hops (Request::Op in
// communicator.cpp) whose messages go through Op::send/Op::recv and complete in
// advance(); an NCCL backend replaces those three (ncclSend/ncclRecv in a
// group, an event per hop) and the fp32 sums, keeping schedules and accounting.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/base/errors.hpp"
#include "src/comm/topology.hpp"

namespace zeropp {

// Wire dtypes; payloads are opaque here. I4 holds two 4-bit values per byte.
enum class DType { F32, BF16, I8, I4 };
int64_t bytes_of(DType t, int64_t count);  // I4: count must be even
const char* name_of(DType t);

enum class Kind { AllGather, ReduceScatter, AllToAll, AllReduce, Broadcast };
enum class Purpose { FwdGather, BwdGather, GradReduce, Other };
constexpr int kNumKinds = 5, kNumPurposes = 4;
const char* name_of(Kind k);     // "all-gather", ...
const char* name_of(Purpose p);  // "forward gather", ...

struct ByteCounters {
  struct Bytes {
    int64_t intra = 0, inter = 0;
    int64_t total() const { return intra + inter; }
    Bytes& operator+=(const Bytes& o) {
      intra += o.intra;
      inter += o.inter;
      return *this;
    }
  };
  std::array<std::array<Bytes, kNumPurposes>, kNumKinds> sent{};
  // Seconds spent blocked in wait() per collective kind (the part of a
  // collective that computation did not hide).
  std::array<double, kNumKinds> seconds{};

  void reset() {
    sent = {};
    seconds = {};
  }
  Bytes& at(Kind k, Purpose p) { return sent[size_t(k)][size_t(p)]; }
  Bytes at(Kind k, Purpose p) const { return sent[size_t(k)][size_t(p)]; }
  Bytes of(Kind k) const;
  Bytes of(Purpose p) const;
  Bytes total() const;
};

// Members of a collective: an owned MPI communicator plus the world rank and
// node of each member, so every destination is known. Group order follows
// `key` (node-major for the standard groups).
class Group {
 public:
  // Collective over topo.world: ranks with the same color form one group.
  Group(const Topology& topo, int color, int key, std::string name);
  static Group world(const Topology& topo) { return Group(topo, 0, topo.rank, "world"); }
  static Group node(const Topology& topo) { return Group(topo, topo.node, topo.local, "node"); }
  static Group cross(const Topology& topo) { return Group(topo, topo.local, topo.node, "cross"); }

  MPI_Comm comm() const { return comm_.get(); }
  int size() const { return int(world_ranks_.size()); }
  int rank() const { return rank_; }
  int world_rank(int member) const { return world_ranks_[size_t(member)]; }
  bool same_node(int member) const { return same_node_[size_t(member)]; }
  const std::string& name() const { return name_; }
  int next_tag();  // a tag per collective, so concurrent collectives never match each other

 private:
  UniqueComm comm_;
  std::vector<int> world_ranks_;
  std::vector<bool> same_node_;
  int rank_ = 0;
  int tag_ = 0;
  std::string name_;
};

class Communicator;

// An in-flight collective. Destroying one that has not completed waits for it.
class Request {
 public:
  struct Op;
  Request();
  Request(Request&&) noexcept;
  Request& operator=(Request&&) noexcept;
  ~Request();
  bool active() const { return op_ != nullptr; }

 private:
  friend class Communicator;
  explicit Request(std::unique_ptr<Op> op);
  std::unique_ptr<Op> op_;
};

class Communicator {
 public:
  // world_rank names this rank in watchdog messages and selects it for set_stall.
  explicit Communicator(int world_rank, double timeout_s = 600, int64_t max_message_bytes = int64_t(1) << 30);
  Communicator(const Communicator&) = delete;  // requests point at it
  Communicator& operator=(const Communicator&) = delete;

  // Ring all-gather of `count` elements per member: member i's slice lands at
  // recv + i·bytes_of(dtype, count). send may alias its own place in recv.
  Request start_allgather(Group& g, const void* send, void* recv, int64_t count, DType dtype, Purpose purpose,
                          const std::string& label);
  void allgather(Group& g, const void* send, void* recv, int64_t count, DType dtype, Purpose purpose,
                 const std::string& label);

  // Ring reduce-scatter: in holds p·n fp32 values (block i for member i); out
  // receives the sum over members of this rank's block. wire is F32 or BF16.
  // in must stay untouched until completion; it is not modified. out may be
  // this rank's block of in.
  Request start_reduce_scatter(Group& g, const float* in, float* out, int64_t n, DType wire, Purpose purpose,
                               const std::string& label);
  void reduce_scatter(Group& g, const float* in, float* out, int64_t n, DType wire, Purpose purpose,
                      const std::string& label);

  // Pairwise all-to-all: block i of send (count elements) goes to member i;
  // block i of recv comes from member i. Buffers must not overlap.
  Request start_alltoall(Group& g, const void* send, void* recv, int64_t count, DType dtype, Purpose purpose,
                         const std::string& label);
  void alltoall(Group& g, const void* send, void* recv, int64_t count, DType dtype, Purpose purpose,
                const std::string& label);

  // Sum of n small values over the group, identical bits on every member.
  void allreduce_sum(Group& g, float* values, int64_t n, Purpose purpose, const std::string& label);
  void allreduce_sum(Group& g, double* values, int64_t n, Purpose purpose, const std::string& label);

  // data (bytes) from member root to all members.
  void broadcast(Group& g, void* data, int64_t bytes, int root, Purpose purpose, const std::string& label);

  bool test(Request& r);  // advances without blocking; true when complete
  void wait(Request& r);  // blocks (politely), with the watchdog

  ByteCounters& counters() { return counters_; }
  const ByteCounters& counters() const { return counters_; }
  void set_step(int64_t step) { step_ = step; }
  int64_t step() const { return step_; }
  double timeout_s() const { return timeout_s_; }
  int64_t max_message_bytes() const { return max_message_bytes_; }

  // Scratch for in-flight collectives, reused across calls: a buffer of at
  // least `bytes` (contents undefined), and its return to the pool.
  std::vector<char> take_scratch(size_t bytes);
  void give_scratch(std::vector<char>&& buf);

  // Emulated inter-node bandwidth (Gbit/s per rank's link; 0: as fast as the
  // machine): a hop that sends b bytes across nodes completes no earlier than
  // b·8/bandwidth after it was posted. For scaling studies on one machine.
  void set_internode_gbps(double gbps) { internode_gbps_ = gbps; }
  double internode_gbps() const { return internode_gbps_; }

  // Fault injection: world rank `rank` sleeps forever before its first
  // collective at `step`, so the others' watchdog fires (needs P > 1).
  void set_stall(int rank, int64_t step) {
    stall_rank_ = rank;
    stall_step_ = step;
  }

 private:
  Request start(std::unique_ptr<Request::Op> op);
  template <class T>
  void allreduce_impl(Group& g, T* values, int64_t n, Purpose purpose, const std::string& label);

  int world_rank_;
  double timeout_s_;
  int64_t max_message_bytes_;
  int64_t step_ = 0;
  int stall_rank_ = -1;
  int64_t stall_step_ = -1;
  ByteCounters counters_;
  std::vector<std::vector<char>> scratch_;
  double internode_gbps_ = 0;
};

}  // namespace zeropp
