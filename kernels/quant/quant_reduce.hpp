// qgZ's receive-side reductions over k quantized chunks (kernels/quant/quantize.hpp
// defines the formats, the scale arithmetic and the NaN/Inf policy).
//
// Inputs: k chunks of n elements each, quantized blockwise with the same
// block: chunk j's bytes are q_in[j*B, (j+1)*B) with B = n (int8) or n/2
// (int4), its scales are scales_in[j*n/block, (j+1)*n/block). n must be a
// multiple of block (block even where int4 is involved); violations throw
// std::invalid_argument. k >= 1.
//
// dequant_sum_requant_*: the intra-node hop. Per block, the k dequantized
// chunks are summed in fp32 in the fixed order
//   s = deq_0; s += deq_1; ...; s += deq_{k-1}
// and s is requantized (the scale of s per kernels/quant/quantize.hpp) into q_out
// (n or n/2 bytes) and scales_out (n/block). Fused: the fp32 sum exists only
// for one block at a time (a scratch of `block` floats per concurrent worker);
// the result is bit-identical to dequant_sum_* followed by quantize_*.
// A NaN scale in any input block (or an fp32 sum that overflows to Inf) makes
// that output block NaN again.
//   _int4:         int4 in, int4 out (qgZ).
//   _int8:         int8 in, int8 out.
//   _int8_to_int4: int8 in, int4 out (intra_node_gradient_bits = 8: int8
//                  inside the node, int4 across nodes, as SDP4Bit).
//   _int4_to_int8: int4 in, int8 out (zero.inter_node_gradient_bits = 8).
//
// dequant_sum_*: the final hop. out (n floats) is overwritten with the same
// fp32 sum; the caller divides by P.
#pragma once

#include "kernels/quant/quantize.hpp"

namespace zeropp {

void dequant_sum_requant_int4(CVec<uint8_t> q_in, CVec<float> scales_in, int k, Vec<uint8_t> q_out,
                              Vec<float> scales_out, int64_t n, int64_t block);
void dequant_sum_requant_int8(CVec<int8_t> q_in, CVec<float> scales_in, int k, Vec<int8_t> q_out,
                              Vec<float> scales_out, int64_t n, int64_t block);
void dequant_sum_requant_int8_to_int4(CVec<int8_t> q_in, CVec<float> scales_in, int k, Vec<uint8_t> q_out,
                                      Vec<float> scales_out, int64_t n, int64_t block);
void dequant_sum_requant_int4_to_int8(CVec<uint8_t> q_in, CVec<float> scales_in, int k, Vec<int8_t> q_out,
                                      Vec<float> scales_out, int64_t n, int64_t block);

void dequant_sum_int4(CVec<uint8_t> q_in, CVec<float> scales_in, int k, Vec<float> out, int64_t n,
                      int64_t block);
void dequant_sum_int8(CVec<int8_t> q_in, CVec<float> scales_in, int k, Vec<float> out, int64_t n,
                      int64_t block);

// Unfused references: the plain dequantize/quantize references of
// kernels/quant/quantize.hpp composed through a full fp32 buffer.
void dequant_sum_requant_int4_reference(CVec<uint8_t> q_in, CVec<float> scales_in, int k, Vec<uint8_t> q_out,
                                        Vec<float> scales_out, int64_t n, int64_t block);
void dequant_sum_requant_int8_reference(CVec<int8_t> q_in, CVec<float> scales_in, int k, Vec<int8_t> q_out,
                                        Vec<float> scales_out, int64_t n, int64_t block);
void dequant_sum_requant_int8_to_int4_reference(CVec<int8_t> q_in, CVec<float> scales_in, int k,
                                                Vec<uint8_t> q_out, Vec<float> scales_out, int64_t n,
                                                int64_t block);
void dequant_sum_int4_reference(CVec<uint8_t> q_in, CVec<float> scales_in, int k, Vec<float> out, int64_t n,
                                int64_t block);
void dequant_sum_int8_reference(CVec<int8_t> q_in, CVec<float> scales_in, int k, Vec<float> out, int64_t n,
                                int64_t block);

}  // namespace zeropp
