# The CUDA path (ZEROPP_ENABLE_CUDA), in two libraries linking CUDA::cudart,
# CUDA::cublas and NCCL from the toolkit (/usr/local/cuda, or NCCL_HOME):
# zeropp_cuda_kernels (kernels/cuda: the model's kernels, quantization and
# collective kernels, cuBLAS GEMM), below zeropp_kernels, whose entry points run
# them under a device context; zeropp_cuda (src/device: device selection, pinned
# staging for comm.device_staging; src/comm/nccl) above zeropp_comm, linked by
# zeropp_comm_backends for comm.backend = nccl and comm.device_staging. Nothing
# needs a GPU at run time unless one of those or train.device = "cuda" is
# chosen, and the host-side tests run without one.
# nvcc compiles for sm_80 and sm_90 (override with
# -DCMAKE_CUDA_ARCHITECTURES=...). tools/gpu_check builds its own sources
# standalone (no MPI, HDF5 or Kokkos): scripts/gpu-check.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES "80;90")
endif()
if(NOT CMAKE_CUDA_COMPILER AND ZEROPP_NVCC)
  set(CMAKE_CUDA_COMPILER ${ZEROPP_NVCC})
endif()
if(CCACHE_PROGRAM)
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)

find_path(ZEROPP_NCCL_INCLUDE nccl.h HINTS ENV NCCL_HOME ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include)
find_library(ZEROPP_NCCL_LIBRARY nccl HINTS ENV NCCL_HOME ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}
             PATH_SUFFIXES lib lib64)
if(NOT ZEROPP_NCCL_INCLUDE OR NOT ZEROPP_NCCL_LIBRARY)
  message(FATAL_ERROR "ZEROPP_ENABLE_CUDA: NCCL not found (nccl.h, libnccl) under the CUDA toolkit "
                      "(${CUDAToolkit_LIBRARY_ROOT}); set NCCL_HOME or -DZEROPP_ENABLE_CUDA=OFF")
endif()
message(STATUS "CUDA ${CUDAToolkit_VERSION} (${CMAKE_CUDA_COMPILER}), architectures ${CMAKE_CUDA_ARCHITECTURES}; "
               "NCCL ${ZEROPP_NCCL_LIBRARY}")

# The model's operations (kernels/cuda/ops.hpp), one per file beside its host twin.
set(zeropp_cuda_ops matmul encoder layernorm layernorm_seed attention causal_softmax attention_decode gelu
    bias_gelu residual crossentropy lm_head_loss adamw sum_squares rmsnorm rope swiglu accumulate convert
    error_feedback buffer_ops qgz_reorder)
list(TRANSFORM zeropp_cuda_ops PREPEND kernels/cuda/)
list(TRANSFORM zeropp_cuda_ops APPEND .cu)
# No FMA contraction, as the host kernels (-ffp-contract=off): the
# elementwise kernels then agree with their host twins bit for bit. Device
# lambdas for the elementwise launcher (kernels/cuda/launch.cuh).
set_source_files_properties(${zeropp_cuda_ops} PROPERTIES COMPILE_OPTIONS "--fmad=false;--extended-lambda")
# The kernels' CUDA twins and cuBLAS: a layer below zeropp_kernels, whose entry
# points call them under a device context (kernels/runtime/device_context.hpp); they
# know nothing above src/base.
add_library(zeropp_cuda_kernels STATIC
  ${zeropp_cuda_ops}
  kernels/cuda/quantize.cu
  kernels/cuda/quant_fp8.cu
  kernels/cuda/comm_kernels.cu
  kernels/cuda/gemm_cublas.cpp
  kernels/cuda/gemm_bf16.cpp)
# The shared runtime, once: CUDA::cudart, never also the static one CMake adds by default.
set_target_properties(zeropp_cuda_kernels PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
                                                     CUDA_RUNTIME_LIBRARY Shared)
target_include_directories(zeropp_cuda_kernels PUBLIC ${CMAKE_SOURCE_DIR})
target_link_libraries(zeropp_cuda_kernels PUBLIC zeropp_base CUDA::cudart CUDA::cublas)
# zeropp_warnings' flags are for the host compiler; nvcc gets them through -Xcompiler.
target_compile_options(zeropp_cuda_kernels PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
                                                   $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
target_compile_definitions(zeropp_cuda_kernels PUBLIC ZEROPP_HAVE_CUDA)
# kernels/runtime/device_context.hpp names the CUDA stream, and every entry point its twin.
target_link_libraries(zeropp_kernels PUBLIC zeropp_cuda_kernels)

# The device above the communicator: device selection, host staging, NCCL.
add_library(zeropp_cuda STATIC
  src/device/cuda_device.cpp
  src/device/cuda_stager.cpp
  src/comm/nccl/nccl_communicator.cpp)
target_include_directories(zeropp_cuda SYSTEM PUBLIC ${ZEROPP_NCCL_INCLUDE})
target_link_libraries(zeropp_cuda PUBLIC zeropp_cuda_kernels ${ZEROPP_NCCL_LIBRARY} zeropp_comm
                      PRIVATE zeropp_warnings)
target_link_libraries(zeropp_comm_backends PUBLIC zeropp_cuda)

# tools/gpu_check (the quantization kernels, cuBLAS and a one-rank NCCL on the
# device, and their throughput) in this build too, for scripts/gpu-bundle.
add_executable(zeropp_gpu_check tools/gpu_check/gpu_check.cu tools/gpu_check/correctness.cu)
set_target_properties(zeropp_gpu_check PROPERTIES CUDA_STANDARD 17 CUDA_RUNTIME_LIBRARY Shared)
target_link_libraries(zeropp_gpu_check PRIVATE zeropp_cuda)
# A printf argument of the wrong type crashes the report of the first mismatch on the GPU.
target_compile_options(zeropp_gpu_check PRIVATE -Xcompiler=-Wformat,-Werror=format)

# Host-side tests of the CUDA path: they need no GPU (and pass with one).
if(ZEROPP_BUILD_TESTS)
  find_package(Catch2 REQUIRED)
  add_executable(zeropp_cuda_tests tests/cuda/test_cuda_host.cpp)
  target_link_libraries(zeropp_cuda_tests PRIVATE zeropp_cuda zeropp_kernels zeropp_test_main zeropp_warnings)
  add_test(NAME cuda_host COMMAND $<TARGET_FILE:zeropp_cuda_tests> "[cuda-host]" --warn NoTests)
  set_tests_properties(cuda_host PROPERTIES TIMEOUT 120)
  # Skipped where a device is present: the test says "SKIPPED:" (one case per entry,
  # since a skip regex hides failures of the others).
  add_test(NAME cuda_host_nodevice COMMAND $<TARGET_FILE:zeropp_cuda_tests> "[cuda-host-nodevice]" --warn NoTests)
  set_tests_properties(cuda_host_nodevice PROPERTIES TIMEOUT 120 SKIP_REGULAR_EXPRESSION "SKIPPED:")
  # Every model kernel of kernels/cuda against its host twin on the device, the
  # entry points' dispatch, and the engine's kernels and memory under a device
  # context; each case says "SKIPPED:" without one (all cases skip together).
  add_executable(zeropp_cuda_kernel_tests tests/cuda/test_cuda_kernels.cpp
                                          tests/cuda/test_cuda_dispatch.cpp tests/cuda/test_cuda_engine_kernels.cpp
                                          tests/cuda/test_cuda_grad_mode.cpp tests/cuda/test_cuda_quant_fp8.cpp)
  target_link_libraries(zeropp_cuda_kernel_tests PRIVATE zeropp_cuda zeropp_kernels zeropp_test_main
                                                         zeropp_warnings)
  add_test(NAME cuda_kernels COMMAND $<TARGET_FILE:zeropp_cuda_kernel_tests> "[cuda-kernels]" --warn NoTests)
  set_tests_properties(cuda_kernels PROPERTIES TIMEOUT 300 SKIP_REGULAR_EXPRESSION "SKIPPED:"
    ENVIRONMENT "OPENBLAS_NUM_THREADS=1;OMP_NUM_THREADS=1")
  add_test(NAME cuda_compare COMMAND $<TARGET_FILE:zeropp_cuda_kernel_tests> "[cuda-compare]" --warn NoTests)
  set_tests_properties(cuda_compare PROPERTIES TIMEOUT 60)
  # The collective tests on the NCCL backend (tests/comm/collective_tests.hpp), as
  # comm_np* runs them on MPI; registered in tests/CMakeLists.txt as comm_nccl_*.
  add_executable(zeropp_comm_nccl_tests tests/cuda/test_communicator_nccl.cpp)
  target_link_libraries(zeropp_comm_nccl_tests PRIVATE zeropp_cuda zeropp_test_main zeropp_warnings)
endif()
