// Sharded checkpoints in one parallel-HDF5 file (layout: docs/checkpoint-format.md).
//
// write_checkpoint is collective: every rank writes exactly the flat ranges it
// holds of every tensor, straight from its own buffers, through MPI-IO with
// collective transfers (no gather to rank 0). A flat range [begin, end) of a
// row-major tensor is selected in the file as the union of at most 2*rank-1
// rectangular hyperslabs (partial rows up to the next aligned block, whole
// blocks, partial rows after them), so the datasets keep their logical shapes.
//
// Commit protocol: the file is written as ".<name>.tmp" in the checkpoint
// directory, flushed (MPI_File_sync on every rank) and closed; rank 0 fsyncs
// it, renames it to <name>, fsyncs the directory, then replaces `latest`
// (written as "latest.tmp", fsynced, renamed) and finally applies retention.
// A rank killed at any moment leaves the previous checkpoint and `latest`
// intact: at worst a stale ".*.tmp" remains, removed by the next save.
//
// Every tensor dataset carries a checksum that does not depend on how the
// tensor was split: sum over elements of mix64(i * 0x9E3779B97F4A7C15 ^ bits)
// mod 2^64 (i = row-major flat index, bits = the IEEE bit pattern; mix64 is
// SplitMix64's finalizer). read_checkpoint verifies every dataset completely.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "src/base/tensor_shard.hpp"

namespace zeropp {

constexpr int kCheckpointFormatVersion = 1;
constexpr const char* kCheckpointFormatName = "zeropp-checkpoint";
constexpr const char* kCheckpointChecksumAlgorithm = "sum-mix64-v1";

// What /state and the root attributes hold besides the tensors.
struct CheckpointMeta {
  int64_t step = 0, tokens_seen = 0;
  uint64_t seed = 0;
  std::string deck_toml;  // the resolved deck
  std::string zero_toml;  // [zero] settings at save time
  std::string code_version;
  int world_size = 1, ranks_per_node = 1, nodes = 1;
  // Other state by name (scheduler, data position, ...): float64 vectors in
  // /state/scalars/<name>, uint64 vectors (RNG states, counters: exact) in
  // /state/words/<name>. Read back in the order written. Rank 0's values are saved.
  std::vector<std::pair<std::string, std::vector<double>>> scalars;
  std::vector<std::pair<std::string, std::vector<uint64_t>>> words;
};

// "step_00000010.h5" for step 10: the names retention and "auto" know.
std::string checkpoint_name(int64_t step);

// Collective over comm. Writes dir/name atomically (see above); dir is created
// if missing. Then keeps the newest `keep` checkpoints by the step in their name
// (0 = all), never the one just written. Throws Error (same on all ranks) for
// bad arguments, an unwritable directory or a file system without room for the
// file (io/files/disk_space.hpp; checked before writing); an I/O failure in the middle
// of the collective write aborts the job with file:line (the previous checkpoint
// is intact).
void write_checkpoint(MPI_Comm comm, const std::string& dir, const std::string& name,
                      const ShardGroups& groups, const CheckpointMeta& meta, int keep);

// Collective over comm. Writes one checkpoint file at `path` as write_checkpoint
// does (through ".<name>.tmp" beside it, fsynced, renamed; replacing `path`),
// but leaves `latest` and other files in its directory alone (for conversions:
// `zeropp ckpt import`).
void write_checkpoint_file(MPI_Comm comm, const std::string& path, const ShardGroups& groups,
                           const CheckpointMeta& meta);

// Collective over comm. Fills every shard's data from `path`, checks the format
// version, that every expected dataset exists with the expected shape, and every
// dataset's checksum (each dataset covered exactly once: from the shards when they
// tile it exactly, else by an extra evenly partitioned read). Returns the metadata.
// Any problem (missing, foreign, truncated, corrupted file; missing dataset; shape;
// checksum) is one Error on every rank naming the file and the dataset.
CheckpointMeta read_checkpoint(MPI_Comm comm, const std::string& path, const ShardGroups& groups);

// One process, no MPI. "auto" or a directory: the file `latest` names in it when
// that file exists, else the checkpoint with the highest step in it, else "".
// Anything else is a file path, returned as is (Error if it does not exist).
// `dir` is the checkpoint directory used for "auto".
std::string resolve_checkpoint(const std::string& dir_or_file_or_auto, const std::string& dir);

// One process, no MPI. The checkpoints in dir, best first: the file `latest`
// names (when it exists), then the others by step, highest first.
std::vector<std::string> checkpoint_candidates(const std::string& dir);

struct DatasetReport {
  std::string path;  // "/model/wte.weight", "/state/scalars/lr", ...
  std::vector<int64_t> shape;
  std::string dtype;  // "float32", "float64", "uint64", or what HDF5 says otherwise
  uint64_t stored_checksum = 0, computed_checksum = 0;
  bool checksum_ok = false;
  std::string problem;  // why not ok ("" when ok)
};
struct CheckpointReport {
  CheckpointMeta meta;
  int format_version = 0;
  std::vector<DatasetReport> datasets;
  int64_t bytes = 0;  // file size
  bool ok = false;    // every dataset's checksum matches
};
// One process, no MPI (for `zeropp ckpt info|verify`): reads every dataset and
// recomputes its checksum. Throws Error for a missing, foreign or truncated file;
// a corrupted dataset is reported (checksum_ok false, ok false), not thrown.
CheckpointReport inspect_checkpoint(const std::string& path);

// Fault injection for crash tests: the rank with this rank in the communicator
// of the next write_checkpoint calls raise(SIGKILL) at the given point, or with
// `stall` sleeps there for good (a rank lost to the network, its process alive).
enum class CheckpointFault {
  kNone,
  kAfterDatasets,   // after writing `after_datasets` tensor datasets (0 = before the first)
  kBeforeRename,    // file closed and fsynced, not yet renamed
  kBeforeLatest,    // renamed, `latest` not yet updated (rank 0 only does this)
  kBeforeRetention  // `latest` updated, old checkpoints not yet removed (rank 0 only)
};
void set_checkpoint_fault(int rank, int after_datasets, bool stall = false);
void set_checkpoint_fault(int rank, CheckpointFault where);
void clear_checkpoint_fault();

// The checksum of `n` float32 values at flat indices first, first+1, ... (one part
// of a dataset: parts add up mod 2^64) and the per-element hash behind it.
uint64_t checksum_part(const float* data, int64_t first, int64_t n);
uint64_t checksum_element(uint64_t flat_index, uint64_t bits);

// The rectangular hyperslabs (start, count) whose union, in row-major order, is
// the flat range [begin, end) of a tensor of this shape (at most 2*rank-1 of them).
struct Hyperslab {
  std::vector<int64_t> start, count;
};
std::vector<Hyperslab> flat_range_hyperslabs(const std::vector<int64_t>& shape, int64_t begin, int64_t end);

}  // namespace zeropp
