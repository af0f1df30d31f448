// qgZ: hierarchical all-to-all quantized gradient reduce-scatter (ZeRO++).
//
// A unit's full fp32 gradient G (padded, P slices of s elements; slice
// p = y·X + x belongs to local rank x of node y) reaches its owners in two
// hops, quantized once per hop and summed in fp32 (never a quantized ring):
//  1. reorder G into X chunks, chunk x = [S_x, S_{X+x}, ..., S_{(Y-1)X+x}]
//     (the slices local rank x of every node owns), quantize blockwise
//     (int4, or int8 with intra_node_gradient_bits = 8);
//  2. all-to-all inside the node: chunk x to local rank x;
//  3. dequantize the X chunks received, sum in fp32, requantize to int4 (or
//     int8 with inter_node_gradient_bits = 8);
//  4. all-to-all across nodes among ranks of the same local index: piece y
//     to node y, i.e. to its owner y·X + x;
//  5. dequantize the Y pieces and sum in fp32. The caller divides by P.
// Payload and scales travel as two all-to-alls per hop (contiguous per
// destination). One node (Y = 1) stops after hop 1's sum; one rank per node
// (X = 1) quantizes straight for hop 2; P = 1 copies. With error feedback
// (LoCo) each hop sends Q(g + e) and keeps e <- b·e + (1-b)(g + e - deq(Q(g + e))).
//
// Bytes sent per rank and unit (QuantScheme::wire_bytes; b = scale bytes per block = 4):
//   hop 1 (intra): ·(bytes(Y·s, bits1) + b·Y·s/block)
//   hop 2 (inter): (Y-1)·(bytes(s, bits2) + b·s/block)
// with bytes(n, 8) = n and bytes(n, 4) = n/2, bits1 = intra_node_gradient_bits,
// bits2 = inter_node_gradient_bits (X = 1 quantizes straight at bits2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/runtime/device_buffer.hpp"
#include "src/comm/communicator.hpp"
#include "src/comm/topology.hpp"
#include "src/zero/quant_scheme.hpp"

namespace zeropp {

struct QgzSettings {
  int64_t block = 256;
  int intra_bits = 4;  // hop 1
  int inter_bits = 4;  // hop 2
  bool error_feedback = false;
  double beta = 0.8;
};

// The sizes of qgZ's staging and error-feedback buffers for units of
// `padded[u]` elements on nodes of X ranks: QgzReducer allocates these, and
// the memory plan (src/zero/state_plan.hpp) counts them.
struct QgzBuffers {
  int64_t max_padded = 0, chunk = 0;  // floats: the largest unit (reorder, dequantize), its node chunk (sum)
  int64_t hop1_bytes = 0, hop2_bytes = 0;    // quantized payloads, each sent and received
  int64_t hop1_scales = 0, hop2_scales = 0;  // fp32 scales, each sent and received
  std::vector<int64_t> error1, error2;       // floats per unit, hop 1 and hop 2; empty without error feedback
  int64_t error_feedback_bytes() const;
  int64_t bytes() const;  // all of it
};
QgzBuffers qgz_buffers(const std::vector<int64_t>& padded, int X, const QgzSettings& s);

class QgzReducer {
 public:
  // unit_padded[u]: the padded size of unit u (a multiple of P·block).
  QgzReducer(const Topology& topo, Communicator& comm, const QgzSettings& s,
             const std::vector<int64_t>& unit_padded);

  // out[s] = sum over ranks of this rank's slice of `grad` (not yet / P);
  // grad and out are in the backend's memory space.
  void reduce(int unit, const float* grad, float* out, const std::string& label);
  // The same in steps, one reduction in flight at a time (the staging is
  // shared): start() reorders and quantizes `grad` (which may then be reused)
  // and starts hop 1; test() moves it on without blocking (hop 1's sum and
  // requantization, hop 2, the final sum) and is true once `out` holds the
  // sum; finish() completes it. The same bits as reduce().
  void start(int unit, const float* grad, float* out, const std::string& label);
  bool test();
  void finish();

  // Zero the error-feedback buffers (every error_feedback_reset steps).
  void reset_error_feedback();
  int64_t memory_bytes() const;
  // The error-feedback buffers of unit u: hop 1 (padded elements, in chunk
  // order) and hop 2 (padded/X elements); empty without error feedback.
  Buffer<float>& hop1_error(int unit) { return e1_[size_t(unit)]; }
  Buffer<float>& hop2_error(int unit) { return e2_[size_t(unit)]; }
  bool has_error_feedback() const { return !e1_.empty(); }

  // Closed forms of the header, for tests and docs.
  static int64_t intra_bytes(int64_t padded, int X, const QuantScheme& intra);
  static int64_t inter_bytes(int64_t padded, int P, int X, const QuantScheme& inter);

 private:
  const Topology& topo_;
  Communicator& comm_;
  QgzSettings s_;
  QuantScheme intra_, inter_;  // hop 1, hop 2
  Group node_, cross_;
  std::vector<int64_t> padded_;
  // The reduction in flight: its hop (0: none) and the two all-to-alls
  // (payload, scales) of that hop.
  struct InFlight {
    int unit = -1, hop = 0;
    float* out = nullptr;
    std::string label;
    Request payload, scales;
  } cur_;
  void start_hop(int hop);
  void quantize_with_feedback(float* x, const Buffer<float>& e, const QuantScheme& q_s, uint8_t* q, float* sc,
                              int64_t m);
  void after_hop();                     // the local work once the current hop's all-to-alls completed
  std::vector<Buffer<float>> e1_, e2_;  // error feedback: hop 1 (reordered G), hop 2 (Y·s)
  // staging, sized for the largest unit
  Buffer<float> reordered_, sum_, deq_;
  Buffer<uint8_t> q1_, q1_recv_, q2_, q2_recv_;
  Buffer<float> sc1_, sc1_recv_, sc2_, sc2_recv_;
};

}  // namespace zeropp
