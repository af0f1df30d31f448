// The loop owns the data: it reads micro-batches from the data loader and
// hands their tokens to the engine (which includes nothing from io/).
#pragma once

#include <cstdint>
#include <vector>

#include "io/data/data_loader.hpp"
#include "src/zero/engine.hpp"

namespace zeropp {

// Micro-batches 0 .. count-1 of optimizer step `step` of this rank.
std::vector<MicroBatch> micro_batches(const DataLoader& loader, int64_t step, int count);

// Validation batches 0 .. count-1 (micro-batch 0 of each "step").
std::vector<MicroBatch> validation_batches(const DataLoader& val, int count);

}  // namespace zeropp
