// Scanning a checkpoint file on one process: metadata, datasets, checksums.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/checkpoint/checkpoint.hpp"

namespace zeropp::ckpt {

struct ScannedDataset {
  DatasetReport report;
  bool has_checksum = false;
};

struct Scan {
  CheckpointMeta meta;
  int format_version = 0;
  std::vector<ScannedDataset> datasets;
  int64_t bytes = 0;
};

// Opens and checks `path` on this process alone (sec2 driver). Throws Error for
// anything that makes it unusable as a checkpoint; per-dataset problems are
// recorded. With `checksum_all`, every dataset is read and its checksum
// recomputed; otherwise only the small /state datasets are.
Scan scan_file(const std::string& path, bool checksum_all);

}  // namespace zeropp::ckpt
