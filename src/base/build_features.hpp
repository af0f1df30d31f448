// What this build was configured with, for the layers that refuse or report
// what it lacks (the deck's validation, the kernels, --version).
#pragma once

namespace zeropp {

// CMake's ZEROPP_WITH_ONEDNN: oneDNN's bf16 GEMMs and batched matmul.
bool onednn_in_build();

}  // namespace zeropp
