// MPI backend of the Communicator (src/comm/communicator.hpp): host buffers,
// every collective built from point-to-point messages whose destinations are
// known, so each byte is accounted as intra- or inter-node. MPI's own
// collectives use internal algorithms we cannot see.
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
// Each collective is a state machine of hops (Request::State subclasses in
// mpi_communicator.cpp): post() sends and receives one hop's messages with
// MPI_Isend/MPI_Irecv, after() does the local work once they completed. With
// emulated links (src/comm/link_emulator.hpp) a hop completes no earlier than
// this rank's links have served its messages (one message per member sent to).
// Only the sender waits: the receiver gets the data when MPI delivers it, so a
// rank downstream of a slow link may finish up to one hop earlier than it.
#pragma once

#include <cstdint>
#include <vector>

#include "src/comm/communicator.hpp"
#include "src/comm/link_emulator.hpp"

namespace zeropp {

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(int world_rank, double timeout_s = 600, EmulatedLinks links = {},
                           int64_t max_message_bytes = int64_t(1) << 30);

  const char* backend() const override { return "mpi"; }
  int64_t max_message_bytes() const { return max_message_bytes_; }
  EmulatedLinks& links() { return links_; }

  // Scratch for in-flight collectives, reused across calls: a buffer of at
  // least `bytes` (contents undefined), and its return to the pool.
  std::vector<char> take_scratch(size_t bytes);
  void give_scratch(std::vector<char>&& buf);

 protected:
  std::unique_ptr<Request::State> post(Group& g, const Collective& c) override;

 private:
  EmulatedLinks links_;
  int64_t max_message_bytes_;
  std::vector<std::vector<char>> scratch_;
};

}  // namespace zeropp
