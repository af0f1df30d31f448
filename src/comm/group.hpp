// Group: the members of a collective, for every communicator backend.
//
// An owned MPI communicator plus the world rank and node of each member, so
// every destination is known and every byte can be classified as intra- or
// inter-node. Group order follows `key` (node-major for the standard groups).
// A backend that needs state of its own per group (NCCL: an ncclComm) attaches
// it on first use; it lives as long as the group.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "src/comm/topology.hpp"

namespace zeropp {

class Group {
 public:
  // Backend state attached to a group (destroyed with it).
  struct Attachment {
    virtual ~Attachment() = default;
  };

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

  Attachment* attachment() const { return attachment_.get(); }
  void attach(std::unique_ptr<Attachment> a) { attachment_ = std::move(a); }

 private:
  UniqueComm comm_;
  std::vector<int> world_ranks_;
  std::vector<bool> same_node_;
  int rank_ = 0;
  int tag_ = 0;
  std::string name_;
  std::unique_ptr<Attachment> attachment_;
};

}  // namespace zeropp
