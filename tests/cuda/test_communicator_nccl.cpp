// The collective tests of tests/comm/collective_tests.hpp on the NCCL backend,
// with device buffers. Without a usable device (none, or fewer than the ranks
// on this node: NCCL refuses two ranks of one communicator on one GPU) every
// case prints "SKIPPED: ..." and the ctest entries report a skip.
// The same tests on the MPI backend staging device buffers through pinned host
// memory (comm.device_staging, src/comm/staging_communicator.hpp): any number
// of ranks on one device; skipped without one (ctest entries comm_staging_cuda_np*).
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <algorithm>

#include "src/comm/nccl/nccl_communicator.hpp"
#include "src/device/cuda_device.hpp"
#include "src/device/cuda_stager.hpp"
#include "tests/comm/staging_support.hpp"

namespace zeropp::test {

// Ranks on this node, and this rank's index among them (the device it uses).
inline std::pair<int, int> node_ranks() {
  MPI_Comm node;
  ZCHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int size = 0, rank = 0;
  ZCHECK_MPI(MPI_Comm_size(node, &size));
  ZCHECK_MPI(MPI_Comm_rank(node, &rank));
  ZCHECK_MPI(MPI_Comm_free(&node));
  return {size, rank};
}

template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(const std::vector<T>& init) : n_(init.size()) {
    REQUIRE(cudaMalloc(&p_, std::max<size_t>(1, n_ * sizeof(T))) == cudaSuccess);
    REQUIRE(cudaMemcpy(p_, init.data(), n_ * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* data() { return static_cast<T*>(p_); }
  std::vector<T> host() const {
    std::vector<T> v(n_);
    REQUIRE(cudaMemcpy(v.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
    return v;
  }

 private:
  void* p_ = nullptr;
  size_t n_;
};

struct NcclBackend {
  static std::string unusable() {
    std::string why;
    const int devices = cuda::device_count(&why);
    if (devices == 0) return "no CUDA device (" + why + ")";
    const int ranks = node_ranks().first;
    if (ranks > devices)
      return std::to_string(ranks) + " ranks on this node but " + std::to_string(devices) + " CUDA device(s)";
    return "";
  }
  static std::unique_ptr<Communicator> make(double timeout_s = 600) {
    cuda::select_device(node_ranks().second, node_ranks().first);
    return std::make_unique<NcclCommunicator>(world_rank(), timeout_s);
  }
  template <class T>
  using Buffer = DeviceBuffer<T>;
};

// Every rank of the node on the current device (device 0 unless set).
struct StagedCudaBackend {
  static std::string unusable() {
    std::string why;
    return cuda::device_count(&why) == 0 ? "no CUDA device (" + why + ")" : "";
  }
  static std::unique_ptr<Communicator> make(double timeout_s = 600) {
    return staged_mpi(std::make_unique<cuda::PinnedStager>(), timeout_s);
  }
  template <class T>
  using Buffer = DeviceBuffer<T>;
};

}  // namespace zeropp::test

#define ZEROPP_COMM_BACKEND zeropp::test::NcclBackend, zeropp::test::StagedCudaBackend
#include "tests/comm/collective_tests.hpp"
