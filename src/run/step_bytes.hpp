// One step's collective bytes summed over the ranks, as one log line:
//   collective bytes | step 20 | all ranks | all-gather intra 123 inter 456 | reduce-scatter ... | broadcast
//   ...
// Every kind, intra- and inter-node, in bytes. The log carries it so that two
// runs' accounting can be compared without reading metrics.h5 (scripts/gpu-check
// part 3: the device run against the host run, on a machine without HDF5 tools).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

#include "src/comm/communicator.hpp"

namespace zeropp {

// Collective over `world` (one reduction); the line on rank 0, "" elsewhere.
std::string step_bytes_line(int64_t step, const ByteCounters& mine, MPI_Comm world);

}  // namespace zeropp
