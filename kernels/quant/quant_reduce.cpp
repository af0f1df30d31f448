#include "kernels/quant/quant_reduce.hpp"

#include <stdexcept>
#include <string>

#include "kernels/quant/quant_isa.hpp"
#include "kernels/runtime/device_context.hpp"

#ifdef ZEROPP_HAVE_CUDA
#include "kernels/cuda/quantize.cuh"
#endif

namespace zeropp {

namespace {

template <int Bits>
using Q = typename QuantFormat<Bits>::Storage;

// check_quant_args for the k input chunks.
template <int Bits>
void check_inputs(const char* who, CVec<Q<Bits>> q_in, CVec<float> scales_in, int k, int64_t n,
                  int64_t block) {
  if (k < 1)
    throw std::invalid_argument(std::string(who) + ": k must be at least 1, not " + std::to_string(k));
  check_quant_args(who, Bits, n, block, n, int64_t(q_in.extent(0)) / k, int64_t(scales_in.extent(0)) / k);
}

// s = deq_0 + deq_1 + ... + deq_{k-1} over block b (left to right, in fp32).
template <int Bits>
void sum_block(const QuantIsaKernels& isa, const Q<Bits>* q, const float* scales, int k, int64_t n,
               int64_t block, int64_t b, float* s) {
  const int64_t chunk_bytes = QuantFormat<Bits>::bytes(n), off = QuantFormat<Bits>::bytes(b * block);
  if constexpr (Bits == 8)
    isa.sum8(q + off, chunk_bytes, scales + b, n / block, k, s, block);
  else
    isa.sum4(q + off, chunk_bytes, scales + b, n / block, k, s, block);
}

template <int InBits, int OutBits>
void dequant_sum_requant(const char* who, CVec<Q<InBits>> q_in, CVec<float> scales_in, int k,
                         Vec<Q<OutBits>> q_out, Vec<float> scales_out, int64_t n, int64_t block) {
  check_inputs<InBits>(who, q_in, scales_in, k, n, block);
  check_quant_args(who, OutBits, n, block, n, q_out.extent(0), scales_out.extent(0));
  ZEROPP_ON_DEVICE(
      float, "dequant_sum_requant",
      by_bits<OutBits>(
          by_bits<InBits>(cuda::dequant_sum_requant_int8, cuda::dequant_sum_requant_int4_to_int8),
          by_bits<InBits>(cuda::dequant_sum_requant_int8_to_int4, cuda::dequant_sum_requant_int4))(
          q_in.data(), scales_in.data(), k, q_out.data(), scales_out.data(), n, block, ZD->stream));
  // One block of fp32 sums per concurrent worker (one with Serial).
  Kokkos::Experimental::UniqueToken<ExecSpace> token;
  Buf<float> scratch(Kokkos::view_alloc(Kokkos::WithoutInitializing, "quant_reduce_scratch"),
                     int64_t(token.size()) * block);
  const auto* pq = q_in.data();
  const float* ps = scales_in.data();
  auto* pq_out = q_out.data();
  float* ps_out = scales_out.data();
  float* pscratch = scratch.data();
  const QuantIsaKernels& isa = quant_kernels();
  Kokkos::parallel_for(
      who, Range(0, n / block), KOKKOS_LAMBDA(const int64_t b) {
        const int t = token.acquire();
        float* s = pscratch + int64_t(t) * block;
        sum_block<InBits>(isa, pq, ps, k, n, block, b, s);
        auto* qb = pq_out + QuantFormat<OutBits>::bytes(b * block);
        if constexpr (OutBits == 8)
          isa.quantize8(s, qb, ps_out + b, 1, block);
        else
          isa.quantize4(s, qb, ps_out + b, 1, block);
        token.release(t);
      });
}

template <int Bits>
void dequant_sum(const char* who, CVec<Q<Bits>> q_in, CVec<float> scales_in, int k, Vec<float> out, int64_t n,
                 int64_t block) {
  check_inputs<Bits>(who, q_in, scales_in, k, n, block);
  check_quant_args(who, Bits, n, block, out.extent(0), QuantFormat<Bits>::bytes(n), n / block);
  ZEROPP_ON_DEVICE(float, "dequant_sum",
                   by_bits<Bits>(cuda::dequant_sum_int8, cuda::dequant_sum_int4)(
                       q_in.data(), scales_in.data(), k, out.data(), n, block, ZD->stream));
  const auto* pq = q_in.data();
  const float* ps = scales_in.data();
  float* po = out.data();
  const QuantIsaKernels& isa = quant_kernels();
  Kokkos::parallel_for(
      who, Range(0, n / block),
      KOKKOS_LAMBDA(const int64_t b) { sum_block<Bits>(isa, pq, ps, k, n, block, b, po + b * block); });
}

// --- references: the plain quantize.hpp references through a full buffer ----

template <int Bits>
void dequant_sum_reference(const char* who, CVec<Q<Bits>> q_in, CVec<float> scales_in, int k, Vec<float> out,
                           int64_t n, int64_t block) {
  check_inputs<Bits>(who, q_in, scales_in, k, n, block);
  const int64_t nb = n / block, chunk_bytes = QuantFormat<Bits>::bytes(n);
  for (int j = 0; j < k; ++j) {
    auto q = sub(q_in, j * chunk_bytes, chunk_bytes);
    auto s = sub(scales_in, j * nb, nb);
    if constexpr (Bits == 8) {
      (j == 0 ? dequantize_int8_reference : dequantize_int8_add_reference)(q, s, out, n, block);
    } else {
      (j == 0 ? dequantize_int4_reference : dequantize_int4_add_reference)(q, s, out, n, block);
    }
  }
}

template <int InBits, int OutBits>
void dequant_sum_requant_reference(const char* who, CVec<Q<InBits>> q_in, CVec<float> scales_in, int k,
                                   Vec<Q<OutBits>> q_out, Vec<float> scales_out, int64_t n, int64_t block) {
  Buf<float> sum("sum", n);
  dequant_sum_reference<InBits>(who, q_in, scales_in, k, sum, n, block);
  if constexpr (OutBits == 8) {
    quantize_int8_reference(sum, q_out, scales_out, n, block);
  } else {
    quantize_int4_reference(sum, q_out, scales_out, n, block);
  }
}

}  // namespace

void dequant_sum_requant_int4(CVec<uint8_t> q_in, CVec<float> scales_in, int k, Vec<uint8_t> q_out,
                              Vec<float> scales_out, int64_t n, int64_t block) {
  dequant_sum_requant<4, 4>("dequant_sum_requant_int4", q_in, scales_in, k, q_out, scales_out, n, block);
}
void dequant_sum_requant_int8(CVec<int8_t> q_in, CVec<float> scales_in, int k, Vec<int8_t> q_out,
                              Vec<float> scales_out, int64_t n, int64_t block) {
  dequant_sum_requant<8, 8>("dequant_sum_requant_int8", q_in, scales_in, k, q_out, scales_out, n, block);
}
void dequant_sum_requant_int8_to_int4(CVec<int8_t> q_in, CVec<float> scales_in, int k, Vec<uint8_t> q_out,
                                      Vec<float> scales_out, int64_t n, int64_t block) {
  dequant_sum_requant<8, 4>("dequant_sum_requant_int8_to_int4", q_in, scales_in, k, q_out, scales_out, n,
                            block);
}
void dequant_sum_requant_int4_to_int8(CVec<uint8_t> q_in, CVec<float> scales_in, int k, Vec<int8_t> q_out,
                                      Vec<float> scales_out, int64_t n, int64_t block) {
  dequant_sum_requant<4, 8>("dequant_sum_requant_int4_to_int8", q_in, scales_in, k, q_out, scales_out, n,
                            block);
}
void dequant_sum_int4(CVec<uint8_t> q_in, CVec<float> scales_in, int k, Vec<float> out, int64_t n,
                      int64_t block) {
  dequant_sum<4>("dequant_sum_int4", q_in, scales_in, k, out, n, block);
}
void dequant_sum_int8(CVec<int8_t> q_in, CVec<float> scales_in, int k, Vec<float> out, int64_t n,
                      int64_t block) {
  dequant_sum<8>("dequant_sum_int8", q_in, scales_in, k, out, n, block);
}

void dequant_sum_requant_int4_reference(CVec<uint8_t> q_in, CVec<float> scales_in, int k, Vec<uint8_t> q_out,
                                        Vec<float> scales_out, int64_t n, int64_t block) {
  dequant_sum_requant_reference<4, 4>("dequant_sum_requant_int4_reference", q_in, scales_in, k, q_out,
                                      scales_out, n, block);
}
void dequant_sum_requant_int8_reference(CVec<int8_t> q_in, CVec<float> scales_in, int k, Vec<int8_t> q_out,
                                        Vec<float> scales_out, int64_t n, int64_t block) {
  dequant_sum_requant_reference<8, 8>("dequant_sum_requant_int8_reference", q_in, scales_in, k, q_out,
                                      scales_out, n, block);
}
void dequant_sum_requant_int8_to_int4_reference(CVec<int8_t> q_in, CVec<float> scales_in, int k,
                                                Vec<uint8_t> q_out, Vec<float> scales_out, int64_t n,
                                                int64_t block) {
  dequant_sum_requant_reference<8, 4>("dequant_sum_requant_int8_to_int4_reference", q_in, scales_in, k, q_out,
                                      scales_out, n, block);
}
void dequant_sum_int4_reference(CVec<uint8_t> q_in, CVec<float> scales_in, int k, Vec<float> out, int64_t n,
                                int64_t block) {
  dequant_sum_reference<4>("dequant_sum_int4_reference", q_in, scales_in, k, out, n, block);
}
void dequant_sum_int8_reference(CVec<int8_t> q_in, CVec<float> scales_in, int k, Vec<float> out, int64_t n,
                                int64_t block) {
  dequant_sum_reference<8>("dequant_sum_int8_reference", q_in, scales_in, k, out, n, block);
}

}  // namespace zeropp
