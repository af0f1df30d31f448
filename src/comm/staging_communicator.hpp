// A Communicator over buffers a host backend cannot read (device memory),
// decorating one that can (the MPI backend): each collective copies its input
// into staging memory (pinned host memory in the CUDA build, src/device/
// cuda_stager.hpp), runs the host collective there, and when that completes
// copies the result back. Selected by comm.device_staging (src/comm/
// make_communicator.hpp): the device-resident engine on machines without
// CUDA-aware MPI, or with several ranks on one GPU (where NCCL refuses).
//
// What stays the host backend's: the schedules and arithmetic (results are
// bitwise the MPI backend's), nonblocking start/test/wait (the host collective
// advances inside test(); the copy back happens in the test() that sees it
// complete), emulated links, and the byte accounting: the bytes the inner
// backend counts (per kind, purpose, intra/inter) move into this
// communicator's counters() (or the next step's, Communicator::sync), so they
// equal the host backend's for the same collectives; staging copies are not communication and are not
// counted. The watchdog is this communicator's (same messages).
//
// Staging memory comes from a pool reused across collectives (pinned
// allocations are slow); each in-flight collective holds its own blocks, so
// overlapping collectives (prefetched gathers) do not share them.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "src/comm/communicator.hpp"
#include "src/comm/stager.hpp"

namespace zeropp {

class StagingCommunicator final : public Communicator {
 public:
  StagingCommunicator(std::unique_ptr<Communicator> host, std::unique_ptr<Stager> stager, int world_rank,
                      double timeout_s);
  ~StagingCommunicator() override;

  const char* backend() const override { return backend_.c_str(); }  // "mpi+staging (<stager>)"

  // For the in-flight states (staging_communicator.cpp).
  struct Block {
    void* p = nullptr;
    size_t bytes = 0;
  };
  Block take(size_t bytes);
  void give(Block b);
  Communicator& host() { return *host_; }
  Stager& stager() { return *stager_; }
  // Hands the host backend this communicator's step (and whether collectives
  // belong to the next one), and moves the bytes it counted into counters() or
  // the next step's (Communicator::sync).
  void absorb_counts();

 protected:
  std::unique_ptr<Request::State> post(Group& g, const Collective& c) override;

 private:
  std::unique_ptr<Communicator> host_;
  std::unique_ptr<Stager> stager_;
  std::string backend_;
  std::vector<Block> free_;
};

}  // namespace zeropp
