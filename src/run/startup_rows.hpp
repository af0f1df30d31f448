// The rows every run's start-up table opens with (zeropp train and zeropp
// rlhf): the deck, the build, the ranks, the model and its parameter count.
// Each command appends the rows of its own loop.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "src/comm/topology.hpp"
#include "src/config/config.hpp"

namespace zeropp {

using StartupRows = std::vector<std::pair<std::string, std::string>>;

StartupRows common_startup_rows(const std::string& deck, const Topology& topo, const ModelConfig& m,
                                int64_t parameters);

}  // namespace zeropp
