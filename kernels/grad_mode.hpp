// Whether a backward kernel adds into an input gradient or overwrites it
// (kernels/matmul.hpp), in its own header so that the CUDA twins
// (kernels/cuda/ops.hpp) share it without the host kernels' Kokkos headers.
#pragma once

namespace zeropp {

enum class GradMode { Accumulate, Overwrite };

}  // namespace zeropp
