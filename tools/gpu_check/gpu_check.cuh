// What the parts of gpu_check share: checked CUDA calls, a device buffer, the
// results table the checks record into (gpu_check.cu), and the entry point of
// the correctness checks (correctness.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// Exit status 3, naming the call, where it was made and the library's message,
// when `call` does not return `success`.
#define GPU_CHECK_CALL(call, success, message)                                                             \
  do {                                                                                                     \
    const auto s_ = (call);                                                                                \
    if (s_ != (success)) {                                                                                 \
      std::fprintf(stderr, "gpu-check: %s failed at %s:%d: %s\n", #call, __FILE__, __LINE__, message(s_)); \
      std::exit(3);                                                                                        \
    }                                                                                                      \
  } while (0)
#define CK(call) GPU_CHECK_CALL(call, cudaSuccess, cudaGetErrorString)

namespace gpu_check {

// A device buffer of n T's, with `offset` bytes of slack in front (misaligned views).
template <class T>
struct Dev {
  char* raw = nullptr;
  T* p = nullptr;
  size_t n = 0;
  explicit Dev(size_t count, size_t offset = 0) : n(count) {
    CK(cudaMalloc(&raw, count * sizeof(T) + offset + 16));
    p = reinterpret_cast<T*>(raw + offset);
  }
  ~Dev() { cudaFree(raw); }
  Dev(const Dev&) = delete;
  void up(const std::vector<T>& h) {
    CK(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> down() const {
    std::vector<T> h(n);
    CK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
};

// Counts a case of the check `name` in the results table; `what` describes
// the first failure.
void record(const std::string& name, bool ok, const std::string& what);

// Sections 1 to 3: every CUDA kernel, cuBLAS and a one-rank NCCL against
// their host references, recorded in the results table.
void run_correctness_checks();

}  // namespace gpu_check
