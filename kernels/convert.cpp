#include "kernels/convert.hpp"

#include "src/base/bf16.hpp"

namespace zeropp {

void to_bf16(CVec<float> in, Vec<uint16_t> out, int64_t n) {
  const float* pi = in.data();
  uint16_t* po = out.data();
  Kokkos::parallel_for(
      "to_bf16", Range(0, n), KOKKOS_LAMBDA(const int64_t i) { po[i] = fp32_to_bf16(pi[i]); });
}

void from_bf16(CVec<uint16_t> in, Vec<float> out, int64_t n) {
  const uint16_t* pi = in.data();
  float* po = out.data();
  Kokkos::parallel_for(
      "from_bf16", Range(0, n), KOKKOS_LAMBDA(const int64_t i) { po[i] = bf16_to_fp32(pi[i]); });
}

void round_to_bf16(Vec<float> x, int64_t n) {
  float* px = x.data();
  Kokkos::parallel_for(
      "round_to_bf16", Range(0, n),
      KOKKOS_LAMBDA(const int64_t i) { px[i] = bf16_to_fp32(fp32_to_bf16(px[i])); });
}

}  // namespace zeropp
