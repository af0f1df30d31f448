// Checked CUDA and cuBLAS calls, as ZCHECK_MPI (src/base/errors.hpp) checks MPI:
// a failure prints "zeropp: rank R: <call> failed at file:line: <library's
// message>" and aborts the job. A kernel launch is checked by
// ZCHECK_CUDA(cudaGetLastError()) right after it (a launch reports
// configuration errors there; faults inside the kernel surface at the next
// synchronising call, which is checked too).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

#include "src/base/errors.hpp"

#define ZCHECK_CUDA(call)                                                                                 \
  do {                                                                                                    \
    const cudaError_t zeropp_ce_ = (call);                                                                \
    if (zeropp_ce_ != cudaSuccess)                                                                        \
      ::zeropp::fatal(#call, __FILE__, __LINE__,                                                          \
                      std::string(cudaGetErrorName(zeropp_ce_)) + ": " + cudaGetErrorString(zeropp_ce_)); \
  } while (0)

#define ZCHECK_CUBLAS(call)                                                                         \
  do {                                                                                              \
    const cublasStatus_t zeropp_bs_ = (call);                                                       \
    if (zeropp_bs_ != CUBLAS_STATUS_SUCCESS)                                                        \
      ::zeropp::fatal(                                                                              \
          #call, __FILE__, __LINE__,                                                                \
          std::string(cublasGetStatusName(zeropp_bs_)) + ": " + cublasGetStatusString(zeropp_bs_)); \
  } while (0)
