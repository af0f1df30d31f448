// Checks before a run allocates or writes anything: does it fit in memory,
// can it write its outputs, would it overwrite another run.
#pragma once

#include <optional>
#include <string>

#include "src/comm/topology.hpp"
#include "src/config/config.hpp"
#include "src/memory/memory_estimate.hpp"
#include "src/memory/memory_split.hpp"
#include "src/memory/node_memory.hpp"

namespace zeropp {

struct MemoryCheck {
  MemoryEstimate need;  // per rank
  MemorySplit split;    // of need: the host part is checked here, the device part by DeviceRun
  NodeMemory node;
  int ranks_on_node = 1;  // processes sharing this machine (emulated nodes included)
};

// The breakdown printed in the start-up table.
std::string memory_summary(const MemoryCheck& m);

// The one-line refusal when a rank needs more host memory (split_memory's host) than
// node.bytes / ranks_on_node, naming what to change; nullopt when the run fits.
std::optional<std::string> memory_refusal(const MemoryCheck& m, const Config& cfg);

// Collective over topo.world: reads this node's memory and refuses `need`
// (one agreed Error) before anything is allocated.
MemoryCheck check_memory(const MemoryEstimate& need, const Config& cfg, const Topology& topo);

// How this run uses its folders: a new run, --resume, --overwrite.
enum class RunFolderUse { New, Resume, Overwrite };

// One process. Checks that train.out_dir and the checkpoint folder are
// writable and, for a New run, that they hold no previous run (metrics.h5 or
// a checkpoint). Throws Error naming the folder and the way out.
void check_run_folders(const Config& cfg, RunFolderUse use);

// One process, for --overwrite once every check has passed: removes the
// previous run's metrics.h5 and checkpoints, so that retention and
// --resume auto never mix the two runs.
void remove_previous_run(const Config& cfg);

}  // namespace zeropp
