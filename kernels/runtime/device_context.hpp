// The GPU this rank computes on, while one is installed.
//
// `zeropp train` with train.device = "cuda" installs a context once, before
// the engine and the model allocate anything, and removes it at the end. While
// one is installed:
// - device_alloc / device_free / copy_to_device / copy_to_host and the
//   buffer operations (kernels/ops/buffer_ops.hpp) work on device memory
//   (cudaMalloc, cudaMemcpy, kernels on the context's stream);
// - every float entry point of kernels/<op>.cpp runs its CUDA twin
//   (kernels/cuda/ops.hpp) on the context's stream and cuBLAS handle, with the
//   Views' data() as device pointers (ZEROPP_ON_DEVICE below);
// - an entry point without a twin, or a double one, refuses (an Error naming
//   the kernel): the host code must never run on device pointers.
// Without one (every host run, every build without CUDA) nothing changes.
// The context is process-wide (one rank, one GPU, one compute thread); the
// OpenMP workers of kernels/runtime/parallel_chunks.hpp never reach an entry point.
#pragma once

#ifdef ZEROPP_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <type_traits>
#endif

namespace zeropp {

#ifdef ZEROPP_HAVE_CUDA
namespace cuda {
class Blas;
}
struct DeviceContext {
  cudaStream_t stream = nullptr;  // the compute stream: every kernel and GEMM of the step
  cuda::Blas* blas = nullptr;     // cuBLAS on that stream
};
#else
struct DeviceContext;  // no CUDA: never installed
#endif

// The installed context, nullptr when the host computes.
DeviceContext* device_context();

#ifdef ZEROPP_HAVE_CUDA
// Where this rank's kernels run: the context's stream, or the legacy default
// stream without one (tests that fill device buffers with cudaMemcpy). The
// communicators order their copies and events against it explicitly.
inline cudaStream_t compute_stream() {
  const DeviceContext* d = device_context();
  return d ? d->stream : cudaStreamLegacy;
}
#endif

// Installs `ctx` (not owned) for the object's life; contexts do not nest.
class ScopedDeviceContext {
 public:
  explicit ScopedDeviceContext(DeviceContext* ctx);
  ~ScopedDeviceContext();
  ScopedDeviceContext(const ScopedDeviceContext&) = delete;
  ScopedDeviceContext& operator=(const ScopedDeviceContext&) = delete;
};

// Throws an Error naming `kernel`: called on the device, it has no CUDA twin.
[[noreturn]] void no_device_twin(const char* kernel);

}  // namespace zeropp

// First statement of a kernel entry point templated on T (its .cpp includes
// kernels/runtime/device_dispatch.hpp, which brings the twins):
//   ZEROPP_ON_DEVICE(T, "layernorm_forward",
//                    cuda::layernorm_forward(out.data(), ..., ZD->stream));
// With a context installed, a float call returns `call` (ZD is the context:
// a void call, or the value the host needs); a double call refuses. Without
// one, or without CUDA, it is nothing. ZEROPP_DEVICE_IF is the same with the
// condition given (fill and copy run on the device for every type but double).
#ifdef ZEROPP_HAVE_CUDA
#define ZEROPP_DEVICE_IF(on_device, name, call)                   \
  if (::zeropp::DeviceContext* ZD = ::zeropp::device_context()) { \
    if constexpr (on_device) {                                    \
      return call;                                                \
    } else {                                                      \
      (void)ZD;                                                   \
      ::zeropp::no_device_twin(name " (double)");                 \
    }                                                             \
  }
#else
#define ZEROPP_DEVICE_IF(on_device, name, call)
#endif
#define ZEROPP_ON_DEVICE(T, name, call) ZEROPP_DEVICE_IF((std::is_same_v<T, float>), name, call)
