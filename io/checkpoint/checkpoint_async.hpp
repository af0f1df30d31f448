// Asynchronous checkpoint saves: the step's state is copied into host
// buffers (a device-to-host copy in a GPU run) and written by background
// threads while training goes on. The file, its checksums and the commit are
// exactly write_checkpoint's (io/checkpoint/checkpoint.hpp): one HDF5 file written as
// ".<name>.tmp", renamed into place, then `latest` and retention.
//
// Threads and MPI. The process initialises MPI with MPI_THREAD_FUNNELED
// (src/app/main.cpp), so the background threads make no MPI call; HDF5 is
// not thread-safe, so rank 0's thread makes its HDF5 calls holding the
// process's HDF5 lock (io/hdf5/hdf5_lock.hpp), as the main thread's metrics
// writes do. The save runs in phases; the main thread moves it from one to
// the next at step boundaries (advance), once every rank's thread is done:
//  1. start (collective): the checks write_checkpoint makes and the
//     snapshot; rank 0's thread creates the file alone (serial HDF5: one
//     process's metadata writes cost a fraction of collective ones) with its
//     metadata and every tensor dataset allocated (contiguous, never filled)
//     but not written, and finds where each dataset's elements start
//     (H5Dget_offset): a rank's flat range is one byte range of the file.
//  2. write (after a broadcast of those offsets): every rank's thread, POSIX
//     only, pwrites its ranges from the snapshot, sums each part's checksum,
//     runs the caller's refusal check on the snapshot, fsyncs and closes.
//  3. commit (after an agreement on errors and a reduction of the checksums
//     to rank 0): rank 0's thread adds the checksum attributes, fsyncs,
//     renames the file into place, replaces `latest` and applies retention.
//  4. done (after an agreement on rank 0's errors).
// Every rank calls start, advance and finish at the same points (the training
// loop's step boundaries), so their collectives come in the same order.
// Disjoint byte ranges written by different processes must be coherent after
// fsync and close, as on local disks, Lustre and GPFS (as MPI-IO needs too).
//
// A crash at any moment (a rank killed in any phase) leaves the previous
// checkpoint and `latest` intact: the rename comes only after every rank's
// data are on disk (rank 0 cannot complete the reduction of phase 3 without
// every rank), until then only the temporary file changes, and the next
// save removes it.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "io/checkpoint/checkpoint.hpp"

namespace zeropp {

class AsyncCheckpointWriter {
 public:
  // Checked on the snapshot by the background thread: a reason to refuse the
  // save (e.g. non-finite values), or nothing. No MPI.
  using Refusal = std::function<std::optional<std::string>(const ShardGroups& snapshot)>;

  explicit AsyncCheckpointWriter(MPI_Comm comm) : comm_(comm) {}
  // Waits for the thread (no MPI): a save not committed leaves its temporary file.
  ~AsyncCheckpointWriter();
  AsyncCheckpointWriter(const AsyncCheckpointWriter&) = delete;
  AsyncCheckpointWriter& operator=(const AsyncCheckpointWriter&) = delete;

  // Collective. Phase 1 above of write_checkpoint(comm, dir, name, groups,
  // meta, keep); returns once rank 0's thread runs. Errors as
  // write_checkpoint's checks (nothing written). A save in flight is an error
  // of the caller (finish it first).
  void start(const std::string& dir, const std::string& name, const ShardGroups& groups,
             const CheckpointMeta& meta, int keep, Refusal refuse);
  bool in_flight() const { return phase_ != Phase::kIdle; }
  // Collective while in flight (one all-reduce, and the next phase's
  // collectives when every rank's thread is done): moves the save on without
  // waiting; true once it is committed.
  bool advance();
  // Collective while in flight: waits for the threads and commits. Errors (of
  // advance too), the same on every rank, for a write failure or a refusal on
  // any rank: the temporary is removed; the previous checkpoint stays `latest`.
  void finish();
  // Bytes of the host snapshot (kept between saves).
  int64_t snapshot_bytes() const;

 private:
  enum class Phase { kIdle, kCreating, kWriting, kCommitting };
  struct Part {               // one tensor's range on this rank
    int64_t file_offset = 0;  // of the range's first element
    std::vector<float> host;
  };
  bool step(bool wait);  // advance, waiting for the threads or not
  void launch(void (AsyncCheckpointWriter::*work)());
  void join_thread();
  void fail();  // after a phase's agreed error: idle, the temporary removed
  // The threads' work: rank 0 creating the file, every rank writing its
  // parts, rank 0 committing.
  void create_file();
  void write_parts();
  void commit_file();

  MPI_Comm comm_;
  int rank_ = 0;  // in comm_ (the threads make no MPI call)
  Phase phase_ = Phase::kIdle;
  std::string dir_, name_;
  CheckpointMeta meta_;
  int keep_ = 0;
  Refusal refuse_;
  ShardGroups snapshot_;  // the caller's groups, data pointing into parts_
  std::vector<Part> parts_;
  std::vector<int64_t> starts_;       // of each dataset's elements in the file (rank 0's thread)
  std::vector<uint64_t> sums_;        // this rank's checksum of each part (on rank 0: all ranks')
  std::optional<std::string> error_;  // the thread's error or refusal
  std::atomic<bool> done_{true};      // this rank's thread has nothing left to do
  std::thread thread_;
};

}  // namespace zeropp
