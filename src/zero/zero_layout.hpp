// How the ZeRO++ settings shape the sharded buffers (pure functions).
//
// Every unit is padded to a multiple of P·align (shard.hpp), align being the
// largest active quantization block, so that every slice holds whole blocks.
// qgZ's error-feedback buffers cover that padded unit in the order of its
// two hops, so they depend on P, on the node layout X, on the padding and on
// the gradient quantization: a checkpoint's buffers are only reused by a run
// whose error_feedback_layout() is the same string (checkpointing.cpp), else
// error feedback restarts from zero.
//
// The settings derived from the deck (hpZ's group, the wire dtype) are
// resolved here once, for the engine, the inference weights and the memory
// estimates alike.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "src/comm/communicator.hpp"
#include "src/config/config.hpp"
#include "src/zero/quant_scheme.hpp"

namespace zeropp {

// The alignment units are padded to: the largest block of qwZ and qgZ (1: none).
inline int64_t unit_align(const ZeroConfig& z) {
  return std::max<int64_t>(z.quantized_weights ? z.weight_block : 1,
                           z.quantized_gradients ? z.gradient_block : 1);
}

// The dtype of gathered weights and of reduced gradients (zero.comm_dtype).
inline DType wire_dtype(const ZeroConfig& z) {
  return z.comm_dtype == CommDType::BF16 ? DType::BF16 : DType::F32;
}

// hpZ's group in training, on P ranks with X per node: zero.hpz_partition_size
// consecutive ranks each keep a secondary copy of the weights, 0 meaning the
// node; 1 is no group (hpZ off). A size that does not divide P is refused
// with an Error naming the key.
int hpz_group_size(const ZeroConfig& z, int P, int X);

// The group an inference route with hpZ ("hpz", "hpz+int8", ...) gathers
// within: the training group, or the node where training's hpZ is off, since
// such a route asks for a group. Refused as hpz_group_size refuses.
int inference_group_size(const ZeroConfig& z, int P, int X);

// qwZ's format, and qgZ's formats inside and across nodes.
inline QuantScheme weight_scheme(const ZeroConfig& z) {
  return {z.weight_bits, z.weight_block, ScaleDType::F32,
          z.weight_format == WeightFormat::FP8 ? QuantElement::E4M3 : QuantElement::Int};
}
inline QuantScheme intra_gradient_scheme(const ZeroConfig& z) {
  return {z.intra_node_gradient_bits, z.gradient_block, ScaleDType::F32};
}
inline QuantScheme inter_gradient_scheme(const ZeroConfig& z) {
  return {z.inter_node_gradient_bits, z.gradient_block, ScaleDType::F32};
}

// "P=4 X=2 align=256 block=128 bits=4": what the error-feedback buffers of a
// run with these settings on P ranks, X per node, belong to ("" without them).
inline std::string error_feedback_layout(const ZeroConfig& z, int P, int X) {
  if (!z.quantized_gradients || !z.gradient_error_feedback) return "";
  // inter-node bits appear only when not the default int4: older checkpoints' layouts stay valid
  const std::string inter =
      z.inter_node_gradient_bits == 4 ? "" : " inter_bits=" + std::to_string(z.inter_node_gradient_bits);
  return "P=" + std::to_string(P) + " X=" + std::to_string(X) + " align=" + std::to_string(unit_align(z)) +
         " block=" + std::to_string(z.gradient_block) +
         " bits=" + std::to_string(z.intra_node_gradient_bits) + inter;
}

}  // namespace zeropp
