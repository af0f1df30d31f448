// An emulated network link: one resource with a bandwidth and a per-message
// latency, for scaling studies on one machine (comm.internode_gbps and friends).
//
// What a link is: each rank's own share of its node's NIC (one link per rank
// and direction of travel: inter-node or intra-node). A node-wide link shared
// by its ranks would need the ranks' send times in one place (shared memory
// between processes) and would depend on the processes' scheduling; a per-rank
// link needs no coordination and is deterministic. So the bandwidth keys are
// per rank: a node of r ranks behind a B Gbit/s NIC is B/r.
//
// How concurrent transfers share it: first come, first served. A message posted
// at t starts when the link has served every earlier message (or at t), holds
// it for latency + bytes·8/bandwidth, and its completion is fixed the moment it
// is posted — which a backend needs when it records a hop's earliest end. Fair
// sharing gives the last of several equal messages the same end but would move
// earlier messages' ends as later ones arrive.
// Closed forms: n messages of s_i bytes posted together end after
// n·latency + Σs_i·8/bandwidth; two concurrent equal transfers take twice one.
//
// EmulatedLinks: a rank's two links, given to a backend when it is built
// (src/comm/make_communicator.hpp). The backend asks them per message: the MPI
// backend for each message of a ring hop (the hop completes no earlier than the
// link has served it), the NCCL backend once per collective for its inter-node
// bytes. A decorator around a backend could only hold a whole collective back,
// which is not what a ring of hops over a slow link does.
#pragma once

#include <chrono>
#include <cstdint>

namespace zeropp {

class LinkEmulator {
 public:
  // gbps <= 0: no bandwidth term; latency_us <= 0: no latency; both: off.
  LinkEmulator(double gbps = 0, double latency_us = 0);
  bool off() const { return gbps_ <= 0 && latency_s_ <= 0; }
  double gbps() const { return gbps_; }
  double latency_us() const { return latency_s_ * 1e6; }

  // A message of `bytes` posted at time t (seconds): when the link has served
  // it. The link is then busy until that time. Off: t.
  double transfer(double t, int64_t bytes);
  double busy_until() const { return free_at_; }

 private:
  double gbps_, latency_s_;
  double free_at_ = 0;
};

class EmulatedLinks {
 public:
  using Clock = std::chrono::steady_clock;
  EmulatedLinks() = default;  // both off
  EmulatedLinks(LinkEmulator inter, LinkEmulator intra) : inter_(inter), intra_(intra) {}
  // A message of `bytes` to another node (inter) or within the node, posted
  // now: the earliest time it may complete (now when that link is off).
  Clock::time_point arrival(bool inter, int64_t bytes);
  // The same for a collective's inter-node bytes, as a duration from now (zero without any).
  Clock::duration inter_time(int64_t inter_bytes);

 private:
  LinkEmulator inter_, intra_;
};

}  // namespace zeropp
