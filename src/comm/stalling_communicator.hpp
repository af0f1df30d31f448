// Fault injection for the watchdog (comm.fault_stall_rank and comm.fault_stall_step,
// and the watchdog tests): a communicator that runs every collective on another
// one, except that world rank `rank` sleeps forever before its first collective
// at step `step`, so that the other ranks' watchdog fires and names it.
//
// A decorator like the staging communicator: the inner backend does the work
// and counts the bytes, which move into this communicator's counters as they
// are counted (Communicator::sync); the watchdog, the in-flight time and the
// time blocked in wait() are this communicator's.
#pragma once

#include <memory>

#include "src/comm/communicator.hpp"

namespace zeropp {

class StallingCommunicator final : public Communicator {
 public:
  StallingCommunicator(std::unique_ptr<Communicator> inner, int world_rank, double timeout_s, int stall_rank,
                       int64_t stall_step);

  const char* backend() const override { return inner_->backend(); }

  Communicator& inner() { return *inner_; }
  void sync_inner() { sync(*inner_); }

 protected:
  std::unique_ptr<Request::State> post(Group& g, const Collective& c) override;

 private:
  std::unique_ptr<Communicator> inner_;
  int stall_rank_;
  int64_t stall_step_;
};

// `comm` itself when stall_rank < 0 (no fault), else `comm` inside a StallingCommunicator.
std::unique_ptr<Communicator> with_stall(std::unique_ptr<Communicator> comm, int world_rank, double timeout_s,
                                         int stall_rank, int64_t stall_step);

}  // namespace zeropp
