#include "src/comm/group.hpp"

#include "src/base/errors.hpp"

namespace zeropp {

Group::Group(const Topology& topo, int color, int key, std::string name) : name_(std::move(name)) {
  MPI_Comm c = MPI_COMM_NULL;
  ZCHECK_MPI(MPI_Comm_split(topo.world.get(), color, key, &c));
  comm_ = UniqueComm(c);
  int p = 0;
  ZCHECK_MPI(MPI_Comm_size(c, &p));
  ZCHECK_MPI(MPI_Comm_rank(c, &rank_));
  MPI_Group mine, world;
  ZCHECK_MPI(MPI_Comm_group(c, &mine));
  ZCHECK_MPI(MPI_Comm_group(topo.world.get(), &world));
  std::vector<int> members(static_cast<size_t>(p));
  for (int i = 0; i < p; ++i) members[size_t(i)] = i;
  world_ranks_.resize(size_t(p));
  ZCHECK_MPI(MPI_Group_translate_ranks(mine, p, members.data(), world, world_ranks_.data()));
  ZCHECK_MPI(MPI_Group_free(&mine));
  ZCHECK_MPI(MPI_Group_free(&world));
  for (int w : world_ranks_) same_node_.push_back(topo.node_of(w) == topo.node);
}

int Group::next_tag() {
  tag_ = (tag_ + 1) % 32768;  // MPI guarantees tags up to 32767
  return tag_;
}

}  // namespace zeropp
