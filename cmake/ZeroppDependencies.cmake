# Finds MPI, parallel HDF5, Kokkos, a CPU BLAS, CLI11 and toml++ and exposes
# each as a target that our code links: zeropp::kokkos, zeropp::hdf5,
# zeropp::blas, zeropp::toml, MPI::MPI_CXX, CLI11::CLI11, nlohmann_json and ICU::uc.

# --- MPI (MPICH, Cray MPICH on Crays, or Open MPI) ----------------------------
find_package(MPI REQUIRED COMPONENTS C CXX)
# Debian names each flavour's parallel HDF5 (h5pcc.mpich, h5pcc.openmpi) and
# packages (libhdf5-mpich-dev, ...) after it; the tests set launcher options by it.
include(CheckSymbolExists)
set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
check_symbol_exists(OPEN_MPI "mpi.h" ZEROPP_OPEN_MPI)
unset(CMAKE_REQUIRED_INCLUDES)
if(ZEROPP_OPEN_MPI)
  set(ZEROPP_MPI_FLAVOUR openmpi)
else()
  set(ZEROPP_MPI_FLAVOUR mpich)
endif()
message(STATUS "MPI flavour: ${ZEROPP_MPI_FLAVOUR}")

# --- Kokkos -----------------------------------------------------------------
# Debian's Trilinos-built Kokkos 3.4 exports Kokkos::kokkos with an include
# directory (<prefix>/include) that does not hold its headers. There we wrap
# Kokkos_INCLUDE_DIRS / Kokkos_LIBRARIES ourselves; a proper Kokkos install
# (3.4+ or 4.x, possibly CUDA-enabled) is used through its own target.
find_package(Kokkos 3.4 REQUIRED)
add_library(zeropp_kokkos INTERFACE)
add_library(zeropp::kokkos ALIAS zeropp_kokkos)
set(_kokkos_sane TRUE)
if(TARGET Kokkos::kokkos)
  get_target_property(_kk_inc Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
  if(_kk_inc)
    foreach(_d IN LISTS _kk_inc)
      if(NOT _d MATCHES "\\$<" AND NOT EXISTS "${_d}/Kokkos_Core.hpp")
        set(_kokkos_sane FALSE)
      endif()
    endforeach()
  endif()
else()
  set(_kokkos_sane FALSE)
endif()
if(_kokkos_sane)
  target_link_libraries(zeropp_kokkos INTERFACE Kokkos::kokkos)
  message(STATUS "Kokkos ${Kokkos_VERSION}: using Kokkos::kokkos")
else()
  if(NOT Kokkos_INCLUDE_DIRS OR NOT Kokkos_LIBRARIES)
    message(FATAL_ERROR "Kokkos found but neither a usable Kokkos::kokkos target nor Kokkos_INCLUDE_DIRS/Kokkos_LIBRARIES")
  endif()
  target_include_directories(zeropp_kokkos SYSTEM INTERFACE ${Kokkos_INCLUDE_DIRS})
  target_link_libraries(zeropp_kokkos INTERFACE ${Kokkos_LIBRARIES} ${Kokkos_TPL_LIBRARIES})
  message(STATUS "Kokkos ${Kokkos_VERSION}: wrapping Kokkos_INCLUDE_DIRS (${Kokkos_INCLUDE_DIRS})")
endif()

# --- parallel HDF5 ----------------------------------------------------------
# FindHDF5 picks the serial flavour when libhdf5-dev is installed too: point
# it at the MPI's flavour first, then refuse anything without H5_HAVE_PARALLEL.
set(HDF5_PREFER_PARALLEL TRUE)
if(NOT HDF5_C_COMPILER_EXECUTABLE AND EXISTS /usr/bin/h5pcc.${ZEROPP_MPI_FLAVOUR})
  set(HDF5_C_COMPILER_EXECUTABLE /usr/bin/h5pcc.${ZEROPP_MPI_FLAVOUR})
endif()
find_package(HDF5 REQUIRED COMPONENTS C)
set(CMAKE_REQUIRED_INCLUDES ${HDF5_INCLUDE_DIRS} ${MPI_C_INCLUDE_DIRS})
check_symbol_exists(H5_HAVE_PARALLEL "H5pubconf.h" ZEROPP_HDF5_PARALLEL)
unset(CMAKE_REQUIRED_INCLUDES)
if(NOT ZEROPP_HDF5_PARALLEL)
  message(FATAL_ERROR "HDF5 at ${HDF5_INCLUDE_DIRS} is not parallel (H5_HAVE_PARALLEL unset); "
                      "install libhdf5-${ZEROPP_MPI_FLAVOUR}-dev or set HDF5_C_COMPILER_EXECUTABLE to a parallel h5pcc")
endif()
add_library(zeropp_hdf5 INTERFACE)
add_library(zeropp::hdf5 ALIAS zeropp_hdf5)
target_include_directories(zeropp_hdf5 SYSTEM INTERFACE ${HDF5_INCLUDE_DIRS})
target_link_libraries(zeropp_hdf5 INTERFACE ${HDF5_LIBRARIES} MPI::MPI_C)
target_compile_definitions(zeropp_hdf5 INTERFACE ${HDF5_DEFINITIONS})

# --- CPU BLAS (CBLAS interface) ---------------------------------------------
# BLA_VENDOR=OpenBLAS (default; libopenblas-dev) or FLAME (CMake's name for
# BLIS; libblis-dev). Each ships its own cblas.h, so the header is looked up
# in the chosen vendor's directory first (HINTS come before the system
# /usr/include/x86_64-linux-gnu/cblas.h, an alternatives link to one of them).
set(BLA_VENDOR OpenBLAS CACHE STRING "BLAS vendor (OpenBLAS, FLAME for BLIS, ...)")
find_package(BLAS REQUIRED)
if(BLA_VENDOR STREQUAL "FLAME")
  set(_cblas_dirs /usr/include/x86_64-linux-gnu/blis-openmp /usr/include/x86_64-linux-gnu/blis-pthread
                  /usr/include/x86_64-linux-gnu/blis-serial /usr/include/blis)
  set(_cblas_pkg libblis-dev)
else()
  set(_cblas_dirs /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/openblas)
  set(_cblas_pkg libopenblas-dev)
endif()
find_path(ZEROPP_CBLAS_INCLUDE cblas.h
  HINTS ${_cblas_dirs}
  PATHS /usr/include/x86_64-linux-gnu /usr/include
  PATH_SUFFIXES openblas blis)
if(NOT ZEROPP_CBLAS_INCLUDE)
  message(FATAL_ERROR "cblas.h not found for BLA_VENDOR=${BLA_VENDOR}; install ${_cblas_pkg}")
endif()
message(STATUS "BLAS (${BLA_VENDOR}): ${BLAS_LIBRARIES}, cblas.h in ${ZEROPP_CBLAS_INCLUDE}")
add_library(zeropp_blas INTERFACE)
add_library(zeropp::blas ALIAS zeropp_blas)
target_include_directories(zeropp_blas SYSTEM INTERFACE ${ZEROPP_CBLAS_INCLUDE})
target_link_libraries(zeropp_blas INTERFACE ${BLAS_LIBRARIES})
if(BLA_VENDOR STREQUAL "OpenBLAS")
  target_compile_definitions(zeropp_blas INTERFACE ZEROPP_BLAS_OPENBLAS)
elseif(BLA_VENDOR STREQUAL "FLAME")
  target_compile_definitions(zeropp_blas INTERFACE ZEROPP_BLAS_BLIS)
endif()

# --- oneDNN (bf16 GEMMs of train.precision = bf16, the attention's batched matmul) ---
# Debian's libdnnl-dev 2.6 (OpenMP runtime). oneDNN picks AMX / AVX512-BF16
# kernels from the CPU's features at run time (kernels/gemm/gemm_bf16.hpp). Its
# OpenMP threads follow OMP_NUM_THREADS, as OpenBLAS's follow OPENBLAS_NUM_THREADS.
# OFF builds kernels/gemm/onednn_absent.cpp instead: fp32 only, every GEMM on the BLAS.
option(ZEROPP_WITH_ONEDNN "oneDNN: bf16 GEMMs (train.precision = bf16) and the attention's batched matmul" ON)
if(ZEROPP_WITH_ONEDNN)
  find_package(dnnl CONFIG QUIET)
  if(NOT TARGET DNNL::dnnl)
    message(FATAL_ERROR "oneDNN not found (dnnl-config.cmake); install libdnnl-dev (apt-get install -y libdnnl-dev), "
                        "set dnnl_DIR to an install's lib/cmake/dnnl, or configure with -DZEROPP_WITH_ONEDNN=OFF "
                        "(fp32 only)")
  endif()
  find_package(OpenMP REQUIRED COMPONENTS CXX)
  message(STATUS "oneDNN ${dnnl_VERSION}: using DNNL::dnnl")
  add_library(zeropp_dnnl INTERFACE)
  add_library(zeropp::dnnl ALIAS zeropp_dnnl)
  target_link_libraries(zeropp_dnnl INTERFACE DNNL::dnnl OpenMP::OpenMP_CXX)
else()
  message(STATUS "oneDNN: off (ZEROPP_WITH_ONEDNN=OFF): fp32 only")
endif()

# --- CLI11 and toml++ -------------------------------------------------------
find_package(CLI11 REQUIRED)
find_package(tomlplusplus REQUIRED)
add_library(zeropp_toml INTERFACE)
add_library(zeropp::toml ALIAS zeropp_toml)
target_link_libraries(zeropp_toml INTERFACE tomlplusplus::tomlplusplus)

# --- JSON (tokenizer files, safetensors headers, config.json) and Unicode classes (tokenizer) ----
find_package(nlohmann_json 3 REQUIRED)
find_package(ICU REQUIRED COMPONENTS uc)
