// Where a rank's estimated memory lives, so that each part is checked against
// its own memory: the node's (src/run/preflight.hpp) and the GPU's
// (src/run/device_run.hpp).
#pragma once

#include <cstdint>

#include "src/config/config.hpp"
#include "src/memory/memory_estimate.hpp"

namespace zeropp {

struct MemorySplit {
  int64_t device = 0;  // the whole estimate in a device run; 0 on the host
  int64_t host = 0;    // the whole estimate in a host run; the parts below in a device run
  // A device run's host memory:
  int64_t staging = 0;  // comm.device_staging: host copies of the communication buffers (MPI)
  int64_t checkpoint =
      0;  // the checkpoint's host copies: a few chunks (io/checkpoint/shard_staging.hpp) or the snapshot
  int64_t data = 0;  // the batch's input and target tokens before their copy to the device
};

// A host run (train.device = "host"): {device 0, host e.total()}, as before the
// split. train.device = "cuda": model states, activations and the wires
// (everything e counts) on the device; on the host the staging pool's upper
// bound (one host copy of each buffer a collective reads or writes: gather
// slots, full gradients, qgZ buffers, hpZ secondaries), the checkpoint's
// chunks and the batch's tokens.
MemorySplit split_memory(const MemoryEstimate& e, const Config& cfg);

}  // namespace zeropp
