// Asynchronous checkpoint saves: the step's state is copied into host
// buffers (a device-to-host copy in a GPU run) and written by a background
// thread while training goes on. The file, its checksums and the commit are
// exactly write_checkpoint's (io/checkpoint.hpp): one parallel-HDF5 file
// written as ".<name>.tmp", renamed into place, then `latest` and retention.
//
// Threads and MPI. The process initialises MPI with MPI_THREAD_FUNNELED
// (src/app/main.cpp), and HDF5 is not thread-safe, so the background thread
// makes no MPI and no HDF5 call. The save runs in three parts:
//  1. start (main thread, collective): the checks write_checkpoint makes, the
//     snapshot, then the file: rank 0 alone creates it (serial HDF5: one
//     process's metadata writes cost a fraction of collective ones) with its
//     metadata and every tensor dataset allocated (contiguous, never filled)
//     but not written, closes it and broadcasts where each dataset's elements
//     start (H5Dget_offset): a rank's flat range is one byte range of the file.
//  2. write (background thread, one per rank, POSIX only): pwrite of the
//     rank's ranges from the snapshot at those offsets, the checksum of each
//     part, the caller's refusal check on the snapshot, fsync, close.
//  3. commit (main thread, collective: finish, called at a step boundary
//     once every rank's thread is done (all_written) or to wait for it): the
//     ranks agree on errors and reduce the checksums to rank 0, which reopens
//     the file alone to add the checksum attributes; then the commit of
//     write_checkpoint (fsync, rename, `latest`, retention).
// Every rank calls start, all_written and finish at the same points (the training
// loop's step boundaries), so their collectives come in the same order.
// Disjoint byte ranges written by different processes must be coherent after
// fsync and close, as on local disks, Lustre and GPFS (as MPI-IO needs too).
//
// A crash at any moment (a rank killed in any part) leaves the previous
// checkpoint and `latest` intact: until the rename only the temporary file
// changes, and the next save removes it.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "io/checkpoint.hpp"

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

  // Collective. Parts 1 and 2 above of write_checkpoint(comm, dir, name,
  // groups, meta, keep); returns once the background thread runs. Errors as
  // write_checkpoint's checks (nothing written). A save in flight is an error
  // of the caller (finish it first).
  void start(const std::string& dir, const std::string& name, const ShardGroups& groups,
             const CheckpointMeta& meta, int keep, Refusal refuse);
  bool in_flight() const { return in_flight_; }
  // Collective while in flight (one all-reduce): whether every rank's thread
  // is done (then finish commits without waiting).
  bool all_written() const;
  // Waits for this rank's thread (no MPI); finish then commits without waiting.
  void wait();
  // Collective while in flight: waits for this rank's thread, then commits.
  // Error, the same on every rank, for a write failure or a refusal on any
  // rank (the temporary is removed; the previous checkpoint stays `latest`).
  void finish();
  // Bytes of the host snapshot (kept between saves).
  int64_t snapshot_bytes() const;

 private:
  struct Part {               // one tensor's range on this rank
    int64_t file_offset = 0;  // of the range's first element
    std::vector<float> host;
  };
  void write_parts();  // the background thread

  MPI_Comm comm_;
  int rank_ = 0;  // in comm_ (the thread makes no MPI call)
  std::string dir_, name_;
  int keep_ = 0;
  Refusal refuse_;
  ShardGroups snapshot_;  // the caller's groups, data pointing into parts_
  std::vector<Part> parts_;
  std::vector<uint64_t> sums_;        // this rank's checksum of each part
  std::optional<std::string> error_;  // the thread's write error or refusal
  bool in_flight_ = false;
  std::atomic<bool> written_{false};
  std::thread thread_;
};

}  // namespace zeropp
