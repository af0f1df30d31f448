// The steps of a checkpoint save that write_checkpoint (io/checkpoint/checkpoint_writer.cpp)
// and the asynchronous writer (io/checkpoint/checkpoint_async.hpp) share: the checks
// before anything is written, the file with its metadata and empty tensor
// datasets, the checksum attributes, and the commit (fsync, rename, `latest`,
// retention). All collective over comm unless said otherwise.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

#include "io/checkpoint/checkpoint.hpp"
#include "io/checkpoint/phase_timer.hpp"
#include "io/hdf5/h5_util.hpp"

namespace zeropp::ckpt {

// One process: raise(SIGKILL) when the fault injection set for this rank is at
// `where` (for kAfterDatasets: after `datasets_written` tensor datasets). No MPI.
void maybe_fault(int rank, CheckpointFault where, int datasets_written = -1);

// Names, shapes, ranges tiling every tensor, the directory (created; rank 0
// removes stale temporaries when `in_checkpoint_dir`) and the room on its file
// system. Error, the same on every rank, before anything is written.
void check_before_write(MPI_Comm comm, const std::string& dir, const std::string& name,
                        const ShardGroups& groups, const CheckpointMeta& meta, bool in_checkpoint_dir);

// Creates `tmp_path` through fapl (parallel_fapl: collective; serial_fapl:
// one process, rank 0) with the root attributes and /state, written by `rank`
// 0 through dxpl. The tensor datasets come next (tensor_dataset).
h5::H5Id create_checkpoint_file(const std::string& tmp_path, const CheckpointMeta& meta, hid_t fapl,
                                hid_t dxpl, int rank);

// Creates group path g (one level at a time) and its float32 dataset of s's
// shape: contiguous, allocated at creation and never filled, so that its
// elements lie row-major at one fixed offset in the file.
h5::H5Id tensor_dataset(hid_t file, const std::string& g, const TensorShard& s);

// The checksum attributes of every tensor dataset (sums[k]: the k-th), then
// the datasets and the file closed (the close writes the last metadata).
void write_checksums_and_close(h5::H5Id& file, std::vector<h5::H5Id>& datasets,
                               const std::vector<uint64_t>& sums);

// Rank 0 alone, no MPI: fsync of the closed temporary ".<name>.tmp" in dir,
// removed if that fails. The error, or nothing.
std::optional<std::string> fsync_temporary(const std::string& dir, const std::string& name);

// Rank 0 alone, no MPI: the fsynced temporary becomes dir/name (rename, fsync
// of dir) and, when `in_checkpoint_dir`, `latest` is replaced and retention
// applied. The error, or nothing.
std::optional<std::string> rename_into_place(const std::string& dir, const std::string& name, int keep,
                                             bool in_checkpoint_dir, PhaseTimer& timer);

// Collective: fsync_temporary and rename_into_place on rank 0, with an
// agreement between them. Error, the same on every rank.
void commit_checkpoint(MPI_Comm comm, const std::string& dir, const std::string& name, int keep,
                       bool in_checkpoint_dir, PhaseTimer& timer);

}  // namespace zeropp::ckpt
