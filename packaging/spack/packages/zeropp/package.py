# Spack recipe for zeropp. The project has no public download, so the recipe
# names no URL: Spack builds a checkout in place (`spack develop`, `spack
# dev-build`: nothing is fetched), and a site that keeps a copy of the
# repository names it in its packages.yaml (README, "Spack"):
#   packages:
#     zeropp:
#       package_attributes:
#         git: <the site's clone URL>
# From the checkout's top folder:
#   spack repo add packaging/spack
#   spack dev-build zeropp@=main                       # CPU: MPI, parallel HDF5, OpenBLAS, oneDNN
#   spack dev-build zeropp@=main +cuda cuda_arch=90    # and the CUDA path (cuBLAS, NCCL)
#   spack dev-build zeropp@=main ~onednn               # fp32 only, no oneDNN
# Its dependencies and variants are checked against CMake's find_package calls
# and options by tests/packaging/lint_spack.py (ctest: packaging_spack_lint).
from spack.package import *


class Zeropp(CMakePackage, CudaPackage):
    """ZeRO-3 / ZeRO++ training of GPT-style transformers over MPI."""

    version("main", branch="main")

    variant(
        "blas",
        default="openblas",
        values=("openblas", "blis"),
        multi=False,
        description="CPU BLAS behind the fp32 GEMMs (CMake's BLA_VENDOR OpenBLAS or FLAME)",
    )
    variant(
        "onednn",
        default=True,
        description="oneDNN: bf16 GEMMs (train.precision = bf16) and the attention's batched matmul; "
        "without it fp32 only, every GEMM on the BLAS",
    )

    depends_on("cmake@3.20:", type="build")
    depends_on("mpi")
    depends_on("hdf5@1.10:+mpi")
    depends_on("kokkos@3.4:")
    depends_on("openblas threads=openmp", when="blas=openblas")
    depends_on("blis threads=openmp", when="blas=blis")
    # oneDNN picks AMX/AVX512-BF16 at run time and emulates bf16 elsewhere.
    depends_on("onednn", when="+onednn")
    depends_on("cli11")
    depends_on("tomlplusplus")
    depends_on("nlohmann-json@3:")
    depends_on("icu4c")
    depends_on("catch2@2", type="test")
    depends_on("nccl", when="+cuda")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("ZEROPP_ENABLE_CUDA", "cuda"),
            self.define_from_variant("ZEROPP_WITH_ONEDNN", "onednn"),
            self.define("ZEROPP_BUILD_TESTS", self.run_tests),
            self.define("BLA_VENDOR", "OpenBLAS" if spec.satisfies("blas=openblas") else "FLAME"),
            # Else FindHDF5 may take a system's h5pcc (cmake/ZeroppDependencies.cmake prefers Debian's).
            self.define("HDF5_C_COMPILER_EXECUTABLE", join_path(spec["hdf5"].prefix.bin, "h5pcc")),
            self.define("MPI_C_COMPILER", spec["mpi"].mpicc),
            self.define("MPI_CXX_COMPILER", spec["mpi"].mpicxx),
        ]
        if spec.satisfies("+cuda"):
            archs = spec.variants["cuda_arch"].value
            if "none" not in archs:
                args.append(self.define("CMAKE_CUDA_ARCHITECTURES", ";".join(archs)))
        return args

    def setup_run_environment(self, env):
        env.set("ZEROPP_SHARE", self.prefix.share.zeropp)
