// The run folder (train.out_dir) of `zeropp train` and `zeropp rlhf`, opened
// only once every check has passed and any checkpoint has loaded, so that a
// refused or failed start never touches a previous run's outputs.
#pragma once

#include <string>

#include "io/metrics.hpp"
#include "src/base/logging.hpp"
#include "src/comm/topology.hpp"
#include "src/config/config.hpp"
#include "src/run/preflight.hpp"
#include "src/run/save_and_resume.hpp"

namespace zeropp {

// Collective over topo.world. Rank 0 removes a previous run (Overwrite),
// makes cfg.train.out_dir, writes deck_toml there as config.toml and opens
// log_name there for `log` (appending when resuming); then every rank opens the
// run's metrics.h5 there, continued after from.step when the run resumed.
MetricsWriter open_run_folder(const Topology& topo, const Config& cfg, const std::string& deck_toml,
                              RunFolderUse use, bool resuming, const ResumePoint& from, LogFile& log,
                              const std::string& log_name);

}  // namespace zeropp
