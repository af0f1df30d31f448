// `bench step`'s GEMM ratio, paired per step: each timed step's rate over the
// GEMM library's rate on the model's shapes timed right after that step, so
// that both are measured in the same moment of a host whose speed drifts.
#pragma once

#include <vector>

#include "src/bench/median.hpp"

namespace zeropp {

struct PairedRatio {
  double median, min, max;  // of ratio_i = s_i / r_i over the timed steps
  double reference_gflops;  // median of r_i
};

// step_seconds[i]: timed step i; mix_seconds[i]: the GEMM mix timed right
// after it (both the slowest rank's); step_flops: one step's FLOPs per rank;
// mix_flops: the mix's FLOPs. s_i = step_flops / step_seconds[i],
// r_i = mix_flops / mix_seconds[i]. Throws Error on empty or unequal lists or
// a non-positive time or FLOP count.
PairedRatio paired_ratio(const std::vector<double>& step_seconds, const std::vector<double>& mix_seconds,
                         double step_flops, double mix_flops);

}  // namespace zeropp
