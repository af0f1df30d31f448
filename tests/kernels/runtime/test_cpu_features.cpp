// The instruction-set choice of the dispatched kernels (kernels/runtime/cpu_features.hpp).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <stdexcept>

#include "kernels/runtime/cpu_features.hpp"

using namespace zeropp;

TEST_CASE("ZEROPP_MAX_CPU_ISA caps the kernels' instruction set and never raises it", "[kernels][simd]") {
  for (SimdIsa cpu : {SimdIsa::baseline, SimdIsa::avx2, SimdIsa::avx512}) {
    INFO("cpu " << simd_isa_name(cpu));
    CHECK(cap_simd_isa(nullptr, cpu) == cpu);
    CHECK(cap_simd_isa("", cpu) == cpu);
    CHECK(cap_simd_isa("avx512", cpu) == cpu);
    CHECK(cap_simd_isa("avx2", cpu) == (cpu == SimdIsa::baseline ? SimdIsa::baseline : SimdIsa::avx2));
    CHECK(cap_simd_isa("baseline", cpu) == SimdIsa::baseline);
    CHECK_THROWS_WITH(cap_simd_isa("AVX2", cpu),
                      "ZEROPP_MAX_CPU_ISA=AVX2: not one of avx512, avx2, baseline");
    CHECK_THROWS_AS(cap_simd_isa("sse2", cpu), std::runtime_error);
  }
  CHECK(simd_isa() == cap_simd_isa(std::getenv("ZEROPP_MAX_CPU_ISA"), cpu_simd_isa()));
}

// The ctest entries kernels_simd_avx2 / kernels_simd_baseline run the [simd]
// kernel tests with the cap set; this case says which path they really ran.
TEST_CASE("the capped instruction set is the one the kernels run", "[kernels][simd]") {
  const char* cap = std::getenv("ZEROPP_MAX_CPU_ISA");
  const SimdIsa want = cap_simd_isa(cap, SimdIsa::avx512);
  if (cpu_simd_isa() < want)
    WARN("SKIPPED: this CPU has " << simd_isa_name(cpu_simd_isa()) << ", not " << simd_isa_name(want)
                                  << ": the kernels ran " << simd_isa_name(simd_isa()));
  else
    CHECK(simd_isa() == want);
}
