#include "src/app/build_info.hpp"

#include "kernels/blas_core.hpp"

namespace zeropp {

namespace {
std::string blas_description() {
  const std::string core = blas_core_name();
  return blas_library() + (core.empty() ? "" : " core " + core);
}
}  // namespace

std::string version_text() {
  return std::string("zeropp ") + ZEROPP_VERSION + "\n  git revision : " + git_revision() +
         "\n  compiler     : " + ZEROPP_COMPILER + " (" + ZEROPP_BUILD_TYPE +
         ")\n  BLAS         : " + blas_description() + "\n  CUDA         : " + ZEROPP_CUDA;
}

std::string version_line() {
  return std::string("zeropp ") + ZEROPP_VERSION + " (git " + git_revision() + "; " + ZEROPP_COMPILER + " " +
         ZEROPP_BUILD_TYPE + "; " + blas_description() + "; CUDA " + ZEROPP_CUDA + ")";
}

}  // namespace zeropp
