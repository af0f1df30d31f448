// Topology: where each rank sits, as P = X·Y ranks on Y nodes of X ranks.
//
// Built collectively from MPI_COMM_WORLD. Ranks are node-major: world rank =
// node·X + local. Nodes are detected (MPI_COMM_TYPE_SHARED), or emulated when
// ranks_per_node > 0 (one machine acting as P/X nodes, for tests and benches).
// Detected layouts that are uneven or not node-major throw Error on every rank.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace zeropp {

// Owns an MPI communicator: freed on destruction (unless MPI is finalized).
class UniqueComm {
 public:
  UniqueComm() = default;
  explicit UniqueComm(MPI_Comm c) : comm_(c) {}
  UniqueComm(UniqueComm&& o) noexcept : comm_(o.release()) {}
  UniqueComm& operator=(UniqueComm&& o) noexcept;
  UniqueComm(const UniqueComm&) = delete;
  UniqueComm& operator=(const UniqueComm&) = delete;
  ~UniqueComm() { reset(); }
  MPI_Comm get() const { return comm_; }
  MPI_Comm release();
  void reset();

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

struct Topology {
  // Collective over `base` (a duplicate becomes `world`). ranks_per_node = 0
  // detects nodes. Tests pass MPI_COMM_SELF to run a one-rank reference.
  explicit Topology(int ranks_per_node = 0, MPI_Comm base = MPI_COMM_WORLD);

  int P = 1, X = 1, Y = 1;  // ranks, ranks per node, nodes
  int rank = 0;             // world rank
  int local = 0;            // rank within its node
  int node = 0;             // node index
  bool emulated = false;
  // This process among those on its machine (MPI_COMM_TYPE_SHARED), also when
  // nodes are emulated: what picks a GPU, since emulated nodes share devices.
  int host_local = 0, host_ranks = 1;
  // Host names of the nodes (gethostname of each node's local rank 0); one
  // entry when nodes are emulated.
  std::vector<std::string> hosts;

  UniqueComm world;       // duplicate of MPI_COMM_WORLD
  UniqueComm node_comm;   // the X ranks of this node, ordered by local
  UniqueComm cross_comm;  // the Y ranks with this local index, ordered by node

  int node_of(int world_rank) const { return world_rank / X; }
  // "P=4 X=2 Y=2 (emulated)", "P=4 X=2 Y=2 (nodes n0, n1)"
  std::string describe() const;
};

}  // namespace zeropp
