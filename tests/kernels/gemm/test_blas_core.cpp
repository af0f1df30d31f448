#include <catch2/catch.hpp>

#include "kernels/gemm/blas_core.hpp"

using namespace zeropp;

TEST_CASE("blas_core_warning names generic kernels on AVX2/AVX-512 CPUs", "[kernels]") {
  const CpuVectorFeatures none{false, false}, avx2{true, false}, avx512{true, true};
  // The case of docs/performance.md: OpenBLAS 0.3.21 on an Emerald Rapids.
  const std::string w = blas_core_warning("Prescott", avx512);
  CHECK_THAT(w, Catch::Contains("generic Prescott kernels") && Catch::Contains("AVX-512") &&
                    Catch::Contains("OPENBLAS_CORETYPE=SkylakeX"));
  CHECK_THAT(blas_core_warning("Nehalem", avx2), Catch::Contains("OPENBLAS_CORETYPE=Haswell"));
  CHECK_THAT(blas_core_warning("sandybridge", avx2), Catch::Contains("Haswell"));
  // Nothing to gain: the CPU has no AVX2, or the kernels use it already.
  CHECK(blas_core_warning("Prescott", none).empty());
  CHECK(blas_core_warning("Haswell", avx2).empty());
  CHECK(blas_core_warning("SkylakeX", avx512).empty());
  CHECK(blas_core_warning("Cooperlake", avx512).empty());
  CHECK(blas_core_warning("", avx512).empty());
}

TEST_CASE("blas_better_coretype: the kernels a generic choice should have been", "[kernels]") {
  const CpuVectorFeatures none{false, false}, avx2{true, false}, avx512{true, true};
  CHECK(blas_better_coretype("Prescott", avx512) == "SkylakeX");
  CHECK(blas_better_coretype("Prescott", avx2) == "Haswell");
  CHECK(blas_better_coretype("SANDYBRIDGE", avx512) == "SkylakeX");
  // Never kernels the CPU lacks, and never a change of kernels that use AVX2 already.
  CHECK(blas_better_coretype("Prescott", none).empty());
  CHECK(blas_better_coretype("Haswell", avx512).empty());
  CHECK(blas_better_coretype("Cooperlake", avx512).empty());
  CHECK(blas_better_coretype("Zen", avx2).empty());
  CHECK(blas_better_coretype("", avx512).empty());
}

TEST_CASE("blas_core_name reports the library's kernels", "[kernels]") {
  const std::string core = blas_core_name();
  INFO("BLAS " << blas_library() << ", kernels '" << core << "'");
#ifdef ZEROPP_BLAS_OPENBLAS
  CHECK_THAT(blas_library(), Catch::StartsWith("OpenBLAS 0."));
  CHECK(!core.empty());
#endif
  // The CPU check itself: AVX-512 (F, BW, VL, DQ) implies AVX2 on every x86 CPU.
  const CpuVectorFeatures cpu = cpu_vector_features();
  CHECK((!cpu.avx512 || cpu.avx2));
}
