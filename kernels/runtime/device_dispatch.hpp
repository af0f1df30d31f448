// What a kernel entry point needs for its first line, ZEROPP_ON_DEVICE
// (kernels/runtime/device_context.hpp): the macro and, in CUDA builds, the twins it
// calls (kernels/cuda/ops.hpp). Included by the kernels' .cpp files only, so
// that their headers stay free of CUDA.
#pragma once

#include "kernels/runtime/device_context.hpp"

#ifdef ZEROPP_HAVE_CUDA
#include "kernels/cuda/ops.hpp"
#endif

namespace zeropp {

// A view's data, or nullptr for an empty one: the twins' "absent" (no bias,
// no position embedding, no targets, no weights, no backward).
template <class V>
auto data_or_null(const V& v) -> decltype(v.data()) {
  return v.size() > 0 ? v.data() : nullptr;
}

}  // namespace zeropp
