// kernels/gemm/onednn.hpp in a build configured with ZEROPP_WITH_ONEDNN=OFF: no
// ISA, so gemm_bf16 and gemm_strided_batched choose the BLAS and refuse to be
// forced onto oneDNN, and the deck refuses what needs it (src/config/validate.cpp).
#include <stdexcept>

#include "kernels/gemm/onednn.hpp"

namespace zeropp {

namespace {
[[noreturn]] void absent(const char* what) {
  throw std::logic_error(std::string(what) + " called in a build without oneDNN");
}
}  // namespace

void onednn_matmul(const MatmulShape&, const void*, const void*, float*) { absent("onednn_matmul"); }
void onednn_round_to_bf16(const float*, int, int, int64_t, uint16_t*) { absent("onednn_round_to_bf16"); }
bool onednn_has_avx512() { return false; }
bool onednn_has_amx() { return false; }
bool onednn_native_bf16() { return false; }
std::string onednn_version_isa() { return "no oneDNN in this build"; }

}  // namespace zeropp
