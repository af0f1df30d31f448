#include "src/run/build_info.hpp"

#include "kernels/gemm/blas_core.hpp"
#include "kernels/gemm/onednn.hpp"
#include "src/base/build_features.hpp"

namespace zeropp {

namespace {
std::string blas_description() {
  const std::string core = blas_core_name();
  return blas_library() + (core.empty() ? "" : " core " + core);
}
const char* onednn_on_off() { return onednn_in_build() ? "on" : "off"; }
}  // namespace

std::string onednn_description() {
  return onednn_in_build() ? std::string("on (") + onednn_version_isa() + ")"
                           : "off (configured with -DZEROPP_WITH_ONEDNN=OFF: fp32 only)";
}

std::string version_text() {
  return std::string("zeropp ") + ZEROPP_VERSION + "\n  git revision : " + git_revision() +
         "\n  compiler     : " + ZEROPP_COMPILER + " (" + ZEROPP_BUILD_TYPE +
         ")\n  BLAS         : " + blas_description() + "\n  CUDA         : " + ZEROPP_CUDA +
         "\n  oneDNN       : " + onednn_description();
}

std::string version_line() {
  return std::string("zeropp ") + ZEROPP_VERSION + " (git " + git_revision() + "; " + ZEROPP_COMPILER + " " +
         ZEROPP_BUILD_TYPE + "; " + blas_description() + "; CUDA " + ZEROPP_CUDA + "; oneDNN " +
         onednn_on_off() + ")";
}

}  // namespace zeropp
