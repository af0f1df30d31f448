// Token + position embedding on the GPU (kernels/ops/encoder.hpp is the contract).
//
// Forward: one thread per output element, out[bt,c] = wte[tok[bt],c] + wpe[t,c]
// (or the token row alone without wpe); bit for bit the host's.
//
// Backward without atomics, in the host's order, so bit for bit the host's and
// deterministic: dwpe by one thread per (t, c) adding dout[b,t,c] for b = 0..B-1;
// dwte from the rows grouped by token: a stable radix sort of (token, row)
// pairs (CUB), then one thread per (run of equal tokens, column) adding the
// run's rows in row order onto dwte[token, c]: every token's columns in
// parallel, each element's additions in the host's order.
#include <cub/device/device_radix_sort.cuh>
#include <stdexcept>

#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ops.hpp"

namespace zeropp::cuda {

namespace {

constexpr int kRunColumns = 32, kRunRows = 8;

__global__ void __launch_bounds__(detail::kThreads) iota_kernel(int32_t* rows, int64_t n) {
  const int64_t r = int64_t(blockIdx.x) * detail::kThreads + threadIdx.x;
  if (r < n) rows[r] = int32_t(r);
}

// Thread (i, c): if sorted position i starts a run of one token, that run's rows into dwte.
__global__ void __launch_bounds__(kRunColumns* kRunRows)
    dwte_runs_kernel(float* dwte, const float* dout, const int32_t* tok, const int32_t* row, int64_t BT,
                     int C) {
  const int c = int(blockIdx.x) * kRunColumns + int(threadIdx.x);
  const int64_t i = int64_t(blockIdx.y) * kRunRows + threadIdx.y;
  if (c >= C || i >= BT || (i > 0 && tok[i] == tok[i - 1])) return;
  const int32_t t = tok[i];
  float acc = dwte[int64_t(t) * C + c];
  for (int64_t j = i; j < BT && tok[j] == t; ++j) acc += dout[int64_t(row[j]) * C + c];
  dwte[int64_t(t) * C + c] = acc;
}

void dwte_backward(float* dwte, const float* dout, const int32_t* tokens, int64_t BT, int C,
                   cudaStream_t stream) {
  if (BT <= 0 || C <= 0) return;
  if (BT > int64_t(kRunRows) * 65535)
    throw std::invalid_argument("encoder_backward: too many rows for one grid");
  const int n = int(BT);
  size_t sort_bytes = 0;
  ZCHECK_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, tokens, static_cast<int32_t*>(nullptr),
                                              static_cast<const int32_t*>(nullptr),
                                              static_cast<int32_t*>(nullptr), n, 0, 32, stream));
  char* scratch = nullptr;  // sorted tokens, row indices, sorted rows, CUB's temporary storage
  const size_t ints = size_t(n) * sizeof(int32_t);
  ZCHECK_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&scratch), 3 * ints + sort_bytes, stream));
  auto* tok = reinterpret_cast<int32_t*>(scratch);
  auto* rows = reinterpret_cast<int32_t*>(scratch + ints);
  auto* sorted_rows = reinterpret_cast<int32_t*>(scratch + 2 * ints);
  iota_kernel<<<unsigned((BT + detail::kThreads - 1) / detail::kThreads), detail::kThreads, 0, stream>>>(rows,
                                                                                                         BT);
  ZCHECK_CUDA(cudaGetLastError());
  ZCHECK_CUDA(cub::DeviceRadixSort::SortPairs(scratch + 3 * ints, sort_bytes, tokens, tok, rows, sorted_rows,
                                              n, 0, 32, stream));
  const dim3 grid(unsigned((C + kRunColumns - 1) / kRunColumns), unsigned((BT + kRunRows - 1) / kRunRows));
  dwte_runs_kernel<<<grid, dim3(kRunColumns, kRunRows), 0, stream>>>(dwte, dout, tok, sorted_rows, BT, C);
  ZCHECK_CUDA(cudaGetLastError());
  ZCHECK_CUDA(cudaFreeAsync(scratch, stream));
}

}  // namespace

void encoder_forward(float* out, const int32_t* tokens, const float* wte, const float* wpe, int B, int Tn,
                     int C, cudaStream_t stream) {
  detail::for_each_index(int64_t(B) * Tn * C, stream, [=] __device__(int64_t i) {
    const int64_t bt = i / C, c = i % C;
    const float e = wte[int64_t(tokens[bt]) * C + c];
    out[i] = wpe ? e + wpe[(bt % Tn) * C + c] : e;
  });
}

void encoder_backward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int B, int Tn,
                      int C, cudaStream_t stream) {
  if (dwpe)
    detail::for_each_index(int64_t(Tn) * C, stream, [=] __device__(int64_t i) {
      float acc = dwpe[i];
      for (int b = 0; b < B; ++b) acc += dout[int64_t(b) * Tn * C + i];
      dwpe[i] = acc;
    });
  dwte_backward(dwte, dout, tokens, int64_t(B) * Tn, C, stream);
}

}  // namespace zeropp::cuda
