// What the per-backend collective tests (tests/comm/collective_tests.hpp) share:
// layouts, member inputs, closed forms, and the MPI backend's harness.
//
// A backend harness B provides
//   B::unusable()   why the backend cannot run here ("" when it can; the
//                   tests then print "SKIPPED: <why>" and return),
//   B::make(t)      a communicator with watchdog timeout t seconds,
//   B::Buffer<T>    a buffer in the backend's memory, made from a host vector;
//                   data() for the collectives, host() copies it back.
#pragma once

#include <mpi.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/comm/communicator.hpp"
#include "src/comm/mpi/mpi_communicator.hpp"

namespace zeropp::test {

// Every X in {1, 2, 4} that divides P.
inline std::vector<int> layouts() {
  int P = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  std::vector<int> xs;
  for (int x : {1, 2, 4})
    if (P % x == 0) xs.push_back(x);
  return xs;
}

// Member m's input: a function of (m, i) so every rank can compute expectations.
inline float value(int m, int64_t i) {
  uint64_t z = uint64_t(m) * 0x9e3779b97f4a7c15ull + uint64_t(i) * 0xbf58476d1ce4e5b9ull;  // splitmix64
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return float(int64_t(z >> 40) - (int64_t(1) << 23)) / float(1 << 23);  // in [-1, 1)
}

// Closed form of a ring collective: (p-1)·b to the next member, inter when it is on another node.
using Bytes = ByteCounters::Bytes;
inline Bytes ring_bytes(const Group& g, int64_t b) {
  const int64_t sent = int64_t(g.size() - 1) * b;
  const bool crosses = g.size() > 1 && !g.same_node((g.rank() + 1) % g.size());
  return crosses ? Bytes{0, sent} : Bytes{sent, 0};
}

// f(topology, group) for the world, node and cross groups of every layout.
template <class F>
void for_each_group(F f) {
  for (int X : layouts()) {
    Topology t(X);
    std::vector<Group> gs;  // made before use: making a group is collective over the world
    gs.push_back(Group::world(t));
    gs.push_back(Group::node(t));
    gs.push_back(Group::cross(t));
    for (Group& g : gs) f(t, g);
  }
}

template <class T>
class HostBuffer {
 public:
  explicit HostBuffer(std::vector<T> init) : v_(std::move(init)) {}
  T* data() { return v_.data(); }
  std::vector<T> host() const { return v_; }

 private:
  std::vector<T> v_;
};

struct MpiBackend {
  static std::string unusable() { return ""; }
  static std::unique_ptr<Communicator> make(double timeout_s = 600, EmulatedLinks links = {}) {
    return std::make_unique<MpiCommunicator>(world_rank(), timeout_s, links);
  }
  template <class T>
  using Buffer = HostBuffer<T>;
};

}  // namespace zeropp::test

// First line of every per-backend test case.
#define ZEROPP_SKIP_UNUSABLE_BACKEND()             \
  do {                                             \
    const std::string why_ = TestType::unusable(); \
    if (!why_.empty()) {                           \
      WARN("SKIPPED: " << why_);                   \
      return;                                      \
    }                                              \
  } while (0)
