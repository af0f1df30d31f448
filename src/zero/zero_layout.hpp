// How the ZeRO++ settings shape the sharded buffers (pure functions).
//
// Every unit is padded to a multiple of P·align (shard.hpp), align being the
// largest active quantization block, so that every slice holds whole blocks.
// qgZ's error-feedback buffers cover that padded unit in the order of its
// two hops, so they depend on P, on the node layout X, on the padding and on
// the gradient quantization: a checkpoint's buffers are only reused by a run
// whose error_feedback_layout() is the same string (checkpointing.cpp), else
// error feedback restarts from zero.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "src/config/config.hpp"
#include "src/zero/quant_scheme.hpp"

namespace zeropp {

// The alignment units are padded to: the largest block of qwZ and qgZ (1: none).
inline int64_t unit_align(const ZeroConfig& z) {
  return std::max<int64_t>(z.quantized_weights ? z.weight_block : 1,
                           z.quantized_gradients ? z.gradient_block : 1);
}

// qwZ's format, and qgZ's formats inside and across nodes.
inline QuantScheme weight_scheme(const ZeroConfig& z) {
  return {z.weight_bits, z.weight_block, ScaleDType::F32,
          z.weight_format == "fp8" ? QuantElement::E4M3 : QuantElement::Int};
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
