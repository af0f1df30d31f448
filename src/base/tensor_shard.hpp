// Neutral views of sharded tensors: what the engine hands out of its model
// states and the checkpoint layer (io/checkpoint/checkpoint.hpp) writes and reads,
// without either knowing the other.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace zeropp {

// This rank's contiguous part of one logical tensor (row-major flat element range).
struct TensorShard {
  std::string name;            // e.g. "h.0.attn.c_attn.weight"; no '/'
  std::vector<int64_t> shape;  // logical (global) shape; {} is a scalar (one element)
  int64_t begin = 0, end = 0;  // flat range [begin, end) this rank holds (may be empty)
  float* data = nullptr;       // end - begin floats (source when writing, destination when reading)
};

// Named groups of shards, e.g. {"model", ...}, {"optimizer/exp_avg", ...},
// {"optimizer/exp_avg_sq", ...}. Every rank passes the same groups with the same
// names and shapes in the same order (empty ranges where it holds nothing).
using ShardGroups = std::vector<std::pair<std::string, std::vector<TensorShard>>>;

}  // namespace zeropp
