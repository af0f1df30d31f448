# Spack recipe for zeropp. Use it from a checkout as a package repository and
# build that checkout (no download; `git` below is where `spack install` fetches):
#   spack repo add packaging/spack
#   spack dev-build zeropp@main                      # CPU: MPI, parallel HDF5, OpenBLAS, oneDNN
#   spack dev-build zeropp@main +cuda cuda_arch=90   # and the CUDA path (cuBLAS, NCCL)
# Its dependency list is checked against CMake's find_package calls by
# tests/packaging/lint_spack.py (ctest: packaging_spack_lint).
from spack.package import *


class Zeropp(CMakePackage, CudaPackage):
    """ZeRO-3 / ZeRO++ training of GPT-style transformers over MPI."""

    homepage = "https://github.com/zeropp/zeropp"
    git = "https://github.com/zeropp/zeropp.git"

    version("main", branch="main")

    variant(
        "blas",
        default="openblas",
        values=("openblas", "blis"),
        multi=False,
        description="CPU BLAS behind the fp32 GEMMs (CMake's BLA_VENDOR OpenBLAS or FLAME)",
    )

    depends_on("cmake@3.20:", type="build")
    depends_on("mpi")
    depends_on("hdf5@1.10:+mpi")
    depends_on("kokkos@3.4:")
    depends_on("openblas threads=openmp", when="blas=openblas")
    depends_on("blis threads=openmp", when="blas=blis")
    # The bf16 GEMMs (train.precision = bf16); oneDNN picks AMX/AVX512-BF16 at run time
    # and emulates bf16 elsewhere, so it is always built in.
    depends_on("onednn")
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
