#include "kernels/runtime/parallel_chunks.hpp"

#include <stdexcept>

#include "kernels/runtime/cpu_features.hpp"

namespace zeropp {

namespace {
int g_kernel_threads = 1;
}

void set_kernel_threads(int n) {
  if (n < 1) throw std::invalid_argument("kernel threads must be at least 1, got " + std::to_string(n));
  g_kernel_threads = n;
}

int kernel_threads() { return g_kernel_threads; }

std::string elementwise_kernels_name() {
  return std::string(simd_isa_name(simd_isa())) + " (" + std::to_string(g_kernel_threads) +
         (g_kernel_threads == 1 ? " thread)" : " threads)");
}

}  // namespace zeropp
