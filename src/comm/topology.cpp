#include "src/comm/topology.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include "src/base/errors.hpp"

namespace zeropp {

UniqueComm& UniqueComm::operator=(UniqueComm&& o) noexcept {
  if (this != &o) {
    reset();
    comm_ = o.release();
  }
  return *this;
}

MPI_Comm UniqueComm::release() {
  const MPI_Comm c = comm_;
  comm_ = MPI_COMM_NULL;
  return c;
}

void UniqueComm::reset() {
  int finalized = 0;
  ZCHECK_MPI(MPI_Finalized(&finalized));
  if (comm_ != MPI_COMM_NULL && !finalized) ZCHECK_MPI(MPI_Comm_free(&comm_));
  comm_ = MPI_COMM_NULL;
}

namespace {

UniqueComm split(MPI_Comm parent, int color, int key) {
  MPI_Comm c = MPI_COMM_NULL;
  ZCHECK_MPI(MPI_Comm_split(parent, color, key, &c));
  return UniqueComm(c);
}

// Every rank's host name, in world order (collective).
std::vector<std::string> host_names(MPI_Comm world, int P) {
  constexpr int kLen = 256;
  char mine[kLen] = {};
  if (gethostname(mine, kLen - 1) != 0) std::snprintf(mine, kLen, "?");
  std::vector<char> all(size_t(P) * kLen);
  ZCHECK_MPI(MPI_Allgather(mine, kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, world));
  std::vector<std::string> names;
  for (int r = 0; r < P; ++r) names.emplace_back(&all[size_t(r) * kLen]);
  return names;
}

// Error message when the detected nodes are not X·Y node-major, or nullopt.
std::optional<std::string> check_detected(MPI_Comm world, MPI_Comm node_comm, int rank, int P,
                                          const std::vector<std::string>& names) {
  int x = 0, local = 0;
  ZCHECK_MPI(MPI_Comm_size(node_comm, &x));
  ZCHECK_MPI(MPI_Comm_rank(node_comm, &local));
  std::vector<int> sizes(size_t(P), 0);
  ZCHECK_MPI(MPI_Allgather(&x, 1, MPI_INT, sizes.data(), 1, MPI_INT, world));
  for (int s : sizes)
    if (s != x)
      return "nodes have different numbers of ranks (" + std::to_string(x) + " and " + std::to_string(s) +
             "); every node must run the same number of ranks";
  // Split-type keeps world order inside a node, so node-major means rank = node·x + local.
  if (rank % x != local)
    return "ranks are not placed node-major (world rank " + std::to_string(rank) + " on " +
           names[size_t(rank)] + " is local rank " + std::to_string(local) + " of a node of " +
           std::to_string(x) + "); place consecutive ranks on the same node (mpiexec -ppn " +
           std::to_string(x) + ", srun --distribution=block)";
  return std::nullopt;
}

}  // namespace

Topology::Topology(int ranks_per_node, MPI_Comm base) {
  MPI_Comm w = MPI_COMM_NULL;
  ZCHECK_MPI(MPI_Comm_dup(base, &w));
  world = UniqueComm(w);
  ZCHECK_MPI(MPI_Comm_size(w, &P));
  ZCHECK_MPI(MPI_Comm_rank(w, &rank));
  MPI_Comm shared = MPI_COMM_NULL;
  ZCHECK_MPI(MPI_Comm_split_type(w, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
  UniqueComm machine(shared);
  ZCHECK_MPI(MPI_Comm_size(shared, &host_ranks));
  ZCHECK_MPI(MPI_Comm_rank(shared, &host_local));
  const std::vector<std::string> names = host_names(w, P);
  std::optional<std::string> err;
  if (ranks_per_node > 0) {
    emulated = true;
    if (P % ranks_per_node != 0)
      err = "zero.ranks_per_node = " + std::to_string(ranks_per_node) +
            " does not divide the number of ranks " + std::to_string(P);
    else
      X = ranks_per_node;
  } else if (ranks_per_node < 0) {
    err = "zero.ranks_per_node = " + std::to_string(ranks_per_node) + " must be 0 (detect) or positive";
  } else {
    err = check_detected(w, shared, rank, P, names);
    if (!err) X = host_ranks;
  }
  agree_on_error(w, err);
  Y = P / X;
  node = rank / X;
  local = rank % X;
  node_comm = split(w, node, local);
  cross_comm = split(w, local, node);
  for (int n = 0; n < (emulated ? 1 : Y); ++n) hosts.push_back(names[size_t(n * X)]);
}

std::string Topology::describe() const {
  std::string s = "P=" + std::to_string(P) + " X=" + std::to_string(X) + " Y=" + std::to_string(Y);
  if (emulated) return s + " (emulated)";
  constexpr size_t kShown = 8;  // a large job's table row stays short
  s += " (nodes ";
  for (size_t n = 0; n < std::min(hosts.size(), kShown); ++n) s += (n ? ", " : "") + hosts[n];
  if (hosts.size() > kShown) s += ", ... " + hosts.back();
  return s + ")";
}

}  // namespace zeropp
