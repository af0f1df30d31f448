#include "src/run/device_run.hpp"

#include <optional>

#include "src/base/errors.hpp"
#include "src/base/logging.hpp"
#ifdef ZEROPP_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/gemm_cublas.hpp"
#include "kernels/runtime/device_context.hpp"
#include "src/device/cuda_device.hpp"
#endif

namespace zeropp {

namespace {
const std::string kWhat = "train.device = \"cuda\": ";
}

int ranks_per_device(int ranks_on_node, int devices) { return (ranks_on_node + devices - 1) / devices; }

std::optional<std::string> device_memory_refusal(int64_t need, int ranks, int64_t free_bytes,
                                                 const std::string& device) {
  if (need * ranks <= free_bytes) return std::nullopt;
  return kWhat + "each rank needs " + human_bytes(double(need)) + " of device memory but " + device +
         " has " + human_bytes(double(free_bytes)) + " free for " + std::to_string(ranks) +
         " rank(s); use more GPUs (model states are split over all ranks), a smaller train.batch_size or "
         "train.seq_len, or a smaller model";
}

void require_host(const Config& cfg, const std::string& command) {
  if (cfg.train.device != Device::Host)
    throw Error(kWhat + "zeropp " + command +
                " runs on the host only (only zeropp train runs on the GPU); set train.device = \"host\"");
}

#ifdef ZEROPP_HAVE_CUDA

struct DeviceRun::Gpu {
  cuda::DeviceInfo info;
  cudaStream_t stream = nullptr;
  std::unique_ptr<cuda::Blas> blas;
  DeviceContext ctx;
  std::optional<ScopedDeviceContext> installed;

  ~Gpu() {
    installed.reset();
    if (stream) ZCHECK_CUDA(cudaStreamSynchronize(stream));  // a fault in the last kernels surfaces here
    blas.reset();
    if (stream) ZCHECK_CUDA(cudaStreamDestroy(stream));
  }
};

DeviceRun::DeviceRun(const Config& cfg, const Topology& topo, const MemoryCheck& memory) {
  if (cfg.train.device != Device::Cuda) return;
  // Several ranks per GPU only where MPI stages the buffers; NCCL needs one GPU each.
  const bool shared = cfg.comm.device_staging;
  std::string why;
  const int count = cuda::device_count(&why);
  auto gpu = std::make_unique<Gpu>();
  try {
    gpu->info = cuda::select_device(topo.host_local, topo.host_ranks, shared);
  } catch (const cuda::DeviceError& e) {
    const bool crowded = count > 0 && topo.host_ranks > count && !shared;
    throw Error(kWhat + e.what() +
                (crowded
                     ? "; or let ranks share a GPU: comm.backend = \"mpi\" with comm.device_staging = true"
                     : ""));
  }
  size_t free_bytes = 0, total_bytes = 0;
  ZCHECK_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (const auto refusal =
          device_memory_refusal(memory.split.device, ranks_per_device(memory.ranks_on_node, count),
                                int64_t(free_bytes), gpu->info.describe()))
    throw Error(*refusal);
  // The communicators record their events and stage their copies on this
  // stream (compute_stream()); blocking, so that the synchronous cudaMemcpy of
  // copy_to_host / copy_to_device also follow its kernels.
  ZCHECK_CUDA(cudaStreamCreate(&gpu->stream));
  gpu->blas = std::make_unique<cuda::Blas>(gpu->stream, cfg.train.tf32);
  gpu->ctx.stream = gpu->stream;
  gpu->ctx.blas = gpu->blas.get();
  gpu->installed.emplace(&gpu->ctx);
  gpu_ = std::move(gpu);
}

std::string DeviceRun::describe() const {
  if (!gpu_) return "host (CPU)";
  return gpu_->info.describe() + "; " + cuda::gemm_backend_name() + ", TF32 " +
         (gpu_->blas->allow_tf32() ? "on" : "off");
}

#else

struct DeviceRun::Gpu {};

DeviceRun::DeviceRun(const Config& cfg, const Topology&, const MemoryCheck&) {
  if (cfg.train.device == Device::Cuda)
    throw Error(kWhat + "this build has no CUDA (configure with -DZEROPP_ENABLE_CUDA=ON)");
}

std::string DeviceRun::describe() const { return "host (CPU)"; }

#endif

DeviceRun::~DeviceRun() = default;

}  // namespace zeropp
