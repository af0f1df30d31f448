#include "src/run/blas_kernels.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/gemm/blas_core.hpp"

namespace zeropp {

namespace {
constexpr const char* kChosenMarker = "ZEROPP_BLAS_CORETYPE_CHOSEN";
}

void choose_blas_kernels(char** argv) {
  const char* set = std::getenv("OPENBLAS_CORETYPE");
  if (set != nullptr && *set != '\0') return;
  const std::string better = blas_better_coretype(blas_core_name(), cpu_vector_features());
  if (better.empty()) return;
  // The marker guards against a loop should the library ignore the variable.
  if (std::getenv(kChosenMarker) != nullptr) return;
  setenv("OPENBLAS_CORETYPE", better.c_str(), 1);
  setenv(kChosenMarker, "1", 1);
  execv("/proc/self/exe", argv);
  // Still here: run on with the kernels loaded; the start-up warning names the setting.
  std::fprintf(stderr, "warning: could not restart with OPENBLAS_CORETYPE=%s (execv /proc/self/exe: %s)\n",
               better.c_str(), std::strerror(errno));
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv(kChosenMarker);
}

std::string blas_kernels_summary() {
  const std::string core = blas_core_name();
  if (std::getenv(kChosenMarker) == nullptr) return core;
  return core + " (OPENBLAS_CORETYPE chosen from the CPU's flags)";
}

}  // namespace zeropp
