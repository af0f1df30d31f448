#include "kernels/parallel_chunks.hpp"

#include <stdexcept>
#include <string>

namespace zeropp {

namespace {
int g_kernel_threads = 1;
}

void set_kernel_threads(int n) {
  if (n < 1) throw std::invalid_argument("kernel threads must be at least 1, got " + std::to_string(n));
  g_kernel_threads = n;
}

int kernel_threads() { return g_kernel_threads; }

}  // namespace zeropp
