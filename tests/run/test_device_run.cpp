// train.device's set-up on the host: the arithmetic of the device memory
// check, and what a run without a GPU says (no context is ever installed).
#include <catch2/catch.hpp>

#include "kernels/runtime/device_context.hpp"
#include "src/base/errors.hpp"
#include "src/run/device_run.hpp"
#ifdef ZEROPP_HAVE_CUDA
#include "src/device/cuda_device.hpp"
#endif

using namespace zeropp;

TEST_CASE("ranks_per_device: processes of a machine over its GPUs, rounded up", "[device-run]") {
  CHECK(ranks_per_device(1, 1) == 1);
  CHECK(ranks_per_device(4, 1) == 4);  // gpu-check part 3: four ranks on one GPU
  CHECK(ranks_per_device(4, 4) == 1);
  CHECK(ranks_per_device(5, 4) == 2);
}

TEST_CASE("device_memory_refusal: the estimate of every rank sharing the GPU against its free memory",
          "[device-run]") {
  const int64_t gib = int64_t(1) << 30;
  CHECK_FALSE(device_memory_refusal(10 * gib, 4, 40 * gib, "device 0: H200"));  // exactly enough
  const auto r = device_memory_refusal(10 * gib, 4, 40 * gib - 1, "device 0: H200");
  REQUIRE(r);
  CHECK_THAT(*r, Catch::StartsWith("train.device = \"cuda\": each rank needs 10.00 GiB") &&
                     Catch::Contains("device 0: H200 has 40.00 GiB free for 4 rank(s)"));
}

TEST_CASE("require_host: host-only commands name train.device", "[device-run]") {
  Config c;
  CHECK_NOTHROW(require_host(c, "rlhf"));
  c.train.device = Device::Cuda;
  CHECK_THROWS_WITH(require_host(c, "rlhf"), Catch::StartsWith("train.device = \"cuda\": zeropp rlhf runs on "
                                                               "the host only"));
}

TEST_CASE("DeviceRun on the host installs nothing", "[device-run]") {
  Config c;
  const DeviceRun d(c, Topology(1, MPI_COMM_SELF), MemoryCheck{});
  CHECK(device_context() == nullptr);
  CHECK(d.describe() == "host (CPU)");
}

TEST_CASE("DeviceRun for cuda: a context for its life on a GPU, one line naming train.device without one",
          "[device-run]") {
  Config c;
  c.train.device = Device::Cuda;
  const Topology topo(1, MPI_COMM_SELF);
#ifdef ZEROPP_HAVE_CUDA
  const bool gpu = cuda::device_count() > 0;
#else
  const bool gpu = false;
#endif
  if (!gpu) {
    CHECK_THROWS_WITH(DeviceRun(c, topo, MemoryCheck{}), Catch::StartsWith("train.device = \"cuda\": "));
    CHECK(device_context() == nullptr);
    return;
  }
  {
    const DeviceRun d(c, topo, MemoryCheck{});
    CHECK(device_context() != nullptr);
    CHECK_THAT(d.describe(), Catch::StartsWith("device 0: ") && Catch::EndsWith("TF32 off"));
  }
  CHECK(device_context() == nullptr);
}
