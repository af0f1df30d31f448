#include "src/zero/quant_scheme.hpp"

#include <stdexcept>
#include <string>

#include "kernels/quant/qgz_reorder.hpp"
#include "kernels/quant/quant_fp8.hpp"
#include "kernels/quant/quant_reduce.hpp"
#include "kernels/quant/quant_ref.hpp"
#include "kernels/quant/quantize.hpp"

namespace zeropp {

namespace {
int64_t round_up(int64_t bytes, int64_t to) { return (bytes + to - 1) / to * to; }
int8_t* s8(uint8_t* q) { return reinterpret_cast<int8_t*>(q); }
const int8_t* s8(const uint8_t* q) { return reinterpret_cast<const int8_t*>(q); }

// qgZ's sums and requantization exist for the integer formats only.
void require_int(const QuantScheme& s, const char* who) {
  if (s.element != QuantElement::Int)
    throw std::invalid_argument(std::string("QuantScheme::") + who + ": fp8 is a weight-gather format only");
}
}  // namespace

int64_t QuantScheme::payload_bytes(int64_t n) const { return quant_ref::payload_bytes(bits, n); }

int64_t QuantScheme::scale_bytes(int64_t n) const { return int64_t(sizeof(float)) * (n / block); }

int64_t QuantScheme::packed_scales_offset(int64_t n) const { return round_up(payload_bytes(n), kPackAlign); }

int64_t QuantScheme::packed_bytes(int64_t n) const {
  return round_up(packed_scales_offset(n) + scale_bytes(n), kPackAlign);
}

void QuantScheme::quantize(const float* x, uint8_t* q, float* scales, int64_t n) const {
  const int64_t nb = payload_bytes(n), ns = n / block;
  if (element == QuantElement::E4M3)
    quantize_fp8(CVec<float>(x, n), Vec<uint8_t>(q, nb), Vec<float>(scales, ns), n, block);
  else if (bits == 8)
    quantize_int8(CVec<float>(x, n), Vec<int8_t>(s8(q), nb), Vec<float>(scales, ns), n, block);
  else
    quantize_int4(CVec<float>(x, n), Vec<uint8_t>(q, nb), Vec<float>(scales, ns), n, block);
}

void QuantScheme::dequantize(const uint8_t* q, const float* scales, float* x, int64_t n) const {
  const int64_t nb = payload_bytes(n), ns = n / block;
  if (element == QuantElement::E4M3)
    dequantize_fp8(CVec<uint8_t>(q, nb), CVec<float>(scales, ns), Vec<float>(x, n), n, block);
  else if (bits == 8)
    dequantize_int8(CVec<int8_t>(s8(q), nb), CVec<float>(scales, ns), Vec<float>(x, n), n, block);
  else
    dequantize_int4(CVec<uint8_t>(q, nb), CVec<float>(scales, ns), Vec<float>(x, n), n, block);
}

void QuantScheme::quantize_packed(const float* x, uint8_t* chunk, int64_t n) const {
  quantize(x, chunk, reinterpret_cast<float*>(chunk + packed_scales_offset(n)), n);
}

void QuantScheme::dequantize_packed(const uint8_t* chunk, float* x, int64_t n) const {
  dequantize(chunk, reinterpret_cast<const float*>(chunk + packed_scales_offset(n)), x, n);
}

void QuantScheme::dequantize_packed_bf16(const uint8_t* chunk, float* x, int64_t n) const {
  const int64_t nb = payload_bytes(n), ns = n / block;
  const CVec<float> sc(reinterpret_cast<const float*>(chunk + packed_scales_offset(n)), ns);
  if (element == QuantElement::E4M3)
    dequantize_fp8_bf16(CVec<uint8_t>(chunk, nb), sc, Vec<float>(x, n), n, block);
  else if (bits == 8)
    dequantize_int8_bf16(CVec<int8_t>(s8(chunk), nb), sc, Vec<float>(x, n), n, block);
  else
    dequantize_int4_bf16(CVec<uint8_t>(chunk, nb), sc, Vec<float>(x, n), n, block);
}

void QuantScheme::quantize_reordered(const float* grad, uint8_t* q, float* scales, int64_t n, int X,
                                     int Y) const {
  require_int(*this, "quantize_reordered");
  const int64_t nb = payload_bytes(n), ns = n / block;
  if (bits == 8)
    qgz_reorder_quantize_int8(CVec<float>(grad, n), Vec<int8_t>(s8(q), nb), Vec<float>(scales, ns), n, X, Y,
                              block);
  else
    qgz_reorder_quantize_int4(CVec<float>(grad, n), Vec<uint8_t>(q, nb), Vec<float>(scales, ns), n, X, Y,
                              block);
}

void QuantScheme::dequantize_sum(const uint8_t* q, const float* scales, int k, float* out, int64_t n) const {
  require_int(*this, "dequantize_sum");
  const int64_t nb = payload_bytes(n) * k, ns = n / block * k;
  if (bits == 8)
    dequant_sum_int8(CVec<int8_t>(s8(q), nb), CVec<float>(scales, ns), k, Vec<float>(out, n), n, block);
  else
    dequant_sum_int4(CVec<uint8_t>(q, nb), CVec<float>(scales, ns), k, Vec<float>(out, n), n, block);
}

void QuantScheme::dequant_sum_requant(const uint8_t* q, const float* scales, int k, const QuantScheme& to,
                                      uint8_t* q_out, float* scales_out, int64_t n) const {
  require_int(*this, "dequant_sum_requant");
  require_int(to, "dequant_sum_requant");
  const int64_t nb = payload_bytes(n) * k, ns = n / block * k, nb_out = to.payload_bytes(n);
  const CVec<float> sc(scales, ns);
  const Vec<float> sc_out(scales_out, n / block);
  if (bits == 8 && to.bits == 8)
    dequant_sum_requant_int8(CVec<int8_t>(s8(q), nb), sc, k, Vec<int8_t>(s8(q_out), nb_out), sc_out, n,
                             block);
  else if (bits == 8)
    dequant_sum_requant_int8_to_int4(CVec<int8_t>(s8(q), nb), sc, k, Vec<uint8_t>(q_out, nb_out), sc_out, n,
                                     block);
  else if (to.bits == 8)
    dequant_sum_requant_int4_to_int8(CVec<uint8_t>(q, nb), sc, k, Vec<int8_t>(s8(q_out), nb_out), sc_out, n,
                                     block);
  else
    dequant_sum_requant_int4(CVec<uint8_t>(q, nb), sc, k, Vec<uint8_t>(q_out, nb_out), sc_out, n, block);
}

}  // namespace zeropp
