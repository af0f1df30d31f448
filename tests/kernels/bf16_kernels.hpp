// Runs a test body once per bf16 GEMM kernel this CPU has (gemm_bf16.hpp),
// forced for the body's duration; a kernel missing here is a WARN.
#pragma once

#include <catch2/catch.hpp>
#include <functional>
#include <stdexcept>

#include "kernels/gemm/gemm_bf16.hpp"

namespace zeropp::test {

inline void for_each_bf16_kernel(const std::function<void(Bf16Kernel)>& body) {
  for (Bf16Kernel k : {Bf16Kernel::RoundedBlas, Bf16Kernel::OneDnn}) {
    try {
      force_bf16_kernel(k);
    } catch (const std::invalid_argument& e) {
      WARN("bf16 kernel not available here: " << e.what());
      continue;
    }
    body(k);
  }
  force_bf16_kernel(std::nullopt);
}

}  // namespace zeropp::test
