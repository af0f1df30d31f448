// The staging communicator's test harnesses (src/comm/staging_communicator.hpp):
// the MPI backend decorated with a Stager, for tests/comm/collective_tests.hpp.
// HostStager stages through plain host memory with memcpy (every build: the
// staging path without a device) and counts what it copies; fresh staging
// memory is filled with 0xA5, so a result that skipped the copy back shows.
#pragma once

#include <cstring>

#include "src/comm/staging_communicator.hpp"
#include "tests/comm/comm_test_support.hpp"

namespace zeropp::test {

class HostStager final : public Stager {
 public:
  const char* name() const override { return "host memory"; }
  void* allocate(size_t bytes) override {
    void* p = ::operator new(bytes);
    std::memset(p, 0xA5, bytes);
    return p;
  }
  void release(void* host) override { ::operator delete(host); }
  void to_host(void* host, const void* dev, size_t bytes) override {
    std::memcpy(host, dev, bytes);
    to_host_bytes += int64_t(bytes);
  }
  void to_device(void* dev, const void* host, size_t bytes) override {
    std::memcpy(dev, host, bytes);
    to_device_bytes += int64_t(bytes);
  }
  int64_t to_host_bytes = 0, to_device_bytes = 0;
};

inline std::unique_ptr<StagingCommunicator> staged_mpi(std::unique_ptr<Stager> stager, double timeout_s,
                                                       EmulatedLinks links = {}) {
  return std::make_unique<StagingCommunicator>(
      std::make_unique<MpiCommunicator>(world_rank(), timeout_s, links), std::move(stager), world_rank(),
      timeout_s);
}

struct StagedHostBackend {
  static std::string unusable() { return ""; }
  static std::unique_ptr<Communicator> make(double timeout_s = 600) {
    return staged_mpi(std::make_unique<HostStager>(), timeout_s);
  }
  template <class T>
  using Buffer = HostBuffer<T>;
};

}  // namespace zeropp::test
