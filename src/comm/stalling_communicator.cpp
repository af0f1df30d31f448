#include "src/comm/stalling_communicator.hpp"

#include <unistd.h>

namespace zeropp {

namespace {

// A collective running on the inner communicator.
class Forwarded final : public Request::State {
 public:
  Forwarded(StallingCommunicator& sc, Kind k, Purpose pu, const std::string& lbl, Request inner)
      : State(sc, k, pu, lbl), sc_(sc), inner_(std::move(inner)) {}
  ~Forwarded() override {
    sc_.inner().wait(inner_);  // only after an exception: the interface waits for completion first
    sc_.sync_inner();
  }
  bool advance() override {
    sc_.sync_inner();
    const bool done = sc_.inner().test(inner_);
    sc_.sync_inner();
    return done;
  }
  int progress() const override { return inner_.progress(); }
  std::vector<int> waiting_for() const override { return inner_.waiting_for(); }

 private:
  StallingCommunicator& sc_;
  Request inner_;
};

}  // namespace

StallingCommunicator::StallingCommunicator(std::unique_ptr<Communicator> inner, int world_rank,
                                           double timeout_s, int stall_rank, int64_t stall_step)
    : Communicator(world_rank, timeout_s),
      inner_(std::move(inner)),
      stall_rank_(stall_rank),
      stall_step_(stall_step) {
  copy_nodes_from(*inner_);
}

std::unique_ptr<Request::State> StallingCommunicator::post(Group& g, const Collective& c) {
  if (world_rank() == stall_rank_ && step() == stall_step_)
    for (;;) sleep(1);  // the others' watchdog must fire
  sync_inner();
  Request r = start_on(*inner_, g, c);
  sync_inner();
  return std::make_unique<Forwarded>(*this, c.kind, c.purpose, c.label, std::move(r));
}

std::unique_ptr<Communicator> with_stall(std::unique_ptr<Communicator> comm, int world_rank, double timeout_s,
                                         int stall_rank, int64_t stall_step) {
  if (stall_rank < 0) return comm;
  return std::make_unique<StallingCommunicator>(std::move(comm), world_rank, timeout_s, stall_rank,
                                                stall_step);
}

}  // namespace zeropp
