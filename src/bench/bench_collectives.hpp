// `zeropp bench collectives`: for a deck and its layout, each collective kind's
// time, bytes (intra/inter-node) and achieved bandwidth per training step, for
// ZeRO-3 and each ZeRO++ variant (qwZ, hpZ, qgZ, all three), at each emulated
// inter-node bandwidth and latency (src/comm/link_emulator.hpp).
#pragma once

#include <vector>

#include "src/config/config.hpp"

namespace zeropp {

int run_bench_collectives(const Config& cfg, int steps, const std::vector<double>& gbps,
                          const std::vector<double>& latencies_us);

}  // namespace zeropp
