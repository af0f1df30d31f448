// A rank's part of a tensor (TensorShard::data) is engine memory: on the GPU
// in a device run, and behind the poisoned arena in the host tests
// (kernels/device_memory.hpp). Checkpoint files and the checks on their
// values see it only through these host copies, one tensor part at a time.
#pragma once

#include <vector>

#include "io/checkpoint.hpp"

namespace zeropp {

// The shard's end - begin floats, copied to the host.
std::vector<float> shard_to_host(const TensorShard& s);

// The shard's floats = host (host.size() == end - begin).
void shard_from_host(const std::vector<float>& host, const TensorShard& s);

}  // namespace zeropp
