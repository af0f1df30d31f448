#include "kernels/quant/qgz_reorder.hpp"

#include <stdexcept>
#include <string>

#include "kernels/quant/quant_isa.hpp"
#include "kernels/quant/quantize.hpp"
#include "kernels/runtime/device_context.hpp"

#ifdef ZEROPP_HAVE_CUDA
#include "kernels/cuda/quantize.cuh"
#endif

namespace zeropp {

namespace {

void check_reorder(const char* who, int64_t n, int X, int Y) {
  if (X < 1 || Y < 1 || n % (int64_t(X) * Y) != 0)
    throw std::invalid_argument(std::string(who) + ": n must be a multiple of X*Y");
}

template <int Bits>
void reorder_quantize(const char* who, CVec<float> grad, Vec<typename QuantFormat<Bits>::Storage> q,
                      Vec<float> scales, int64_t n, int X, int Y, int64_t block) {
  check_reorder(who, n, X, Y);
  check_quant_args(who, Bits, n, block, grad.extent(0), q.extent(0), scales.extent(0));
  const int64_t s = n / (int64_t(X) * Y);
  if (s % block != 0)
    throw std::invalid_argument(std::string(who) + ": the slice n/(X*Y) = " + std::to_string(s) +
                                " is not a multiple of block = " + std::to_string(block));
  ZEROPP_ON_DEVICE(
      float, "qgz_reorder_quantize",
      cuda::qgz_reorder_quantize(Bits, grad.data(), q.data(), scales.data(), n, X, Y, block, ZD->stream));
  const float* g = grad.data();
  auto* pq = q.data();
  float* ps = scales.data();
  const QuantIsaKernels& isa = quant_kernels();
  // Piece j = x·Y + y of the chunk order is slice y·X + x of grad: one call per slice.
  Kokkos::parallel_for(
      who, Range(0, int64_t(X) * Y), KOKKOS_LAMBDA(const int64_t j) {
        const int64_t x = j / Y, y = j % Y;
        const float* src = g + (y * X + x) * s;
        auto* qj = pq + QuantFormat<Bits>::bytes(j * s);
        if constexpr (Bits == 8)
          isa.quantize8(src, qj, ps + j * s / block, s / block, block);
        else
          isa.quantize4(src, qj, ps + j * s / block, s / block, block);
      });
}

}  // namespace

void qgz_reorder(CVec<float> grad, Vec<float> out, int64_t n, int X, int Y) {
  check_reorder("qgz_reorder", n, X, Y);
  ZEROPP_ON_DEVICE(float, "qgz_reorder", cuda::qgz_reorder(grad.data(), out.data(), n, X, Y, ZD->stream));
  const int64_t s = n / (int64_t(X) * Y);
  const float* g = grad.data();
  float* o = out.data();
  // One contiguous copy of s elements per slice: per-element index arithmetic
  // (three 64-bit divisions) made this cost more than the GEMMs of a small step.
  Kokkos::parallel_for(
      "qgz_reorder", Range(0, int64_t(X) * Y), KOKKOS_LAMBDA(const int64_t b) {
        const int64_t x = b / Y, y = b % Y;
        const float* src = g + (y * X + x) * s;
        float* dst = o + b * s;
        for (int64_t i = 0; i < s; ++i) dst[i] = src[i];
      });
}

void qgz_reorder_quantize_int8(CVec<float> grad, Vec<int8_t> q, Vec<float> scales, int64_t n, int X, int Y,
                               int64_t block) {
  reorder_quantize<8>("qgz_reorder_quantize_int8", grad, q, scales, n, X, Y, block);
}
void qgz_reorder_quantize_int4(CVec<float> grad, Vec<uint8_t> q, Vec<float> scales, int64_t n, int X, int Y,
                               int64_t block) {
  reorder_quantize<4>("qgz_reorder_quantize_int4", grad, q, scales, n, X, Y, block);
}

}  // namespace zeropp
