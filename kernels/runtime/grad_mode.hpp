// Whether a backward kernel adds into an input gradient or overwrites it
// (kernels/ops/matmul.hpp), in its own header so that the CUDA twins
// (kernels/cuda/ops.hpp) share it without the host kernels' Kokkos headers.
// Overwrite leaves the bits Accumulate leaves in a zeroed buffer, never reading
// the buffer (tests/kernels/runtime/test_grad_mode.cpp), up to the sign of a zero: a
// kernel that stores x where Accumulate stores 0 + x differs for x = -0.0
// only, a term that changes no sum the consumers (GEMMs, column sums) form.
#pragma once

namespace zeropp {

enum class GradMode { Accumulate, Overwrite };

}  // namespace zeropp
