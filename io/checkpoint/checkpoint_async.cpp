#include "io/checkpoint/checkpoint_async.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "io/checkpoint/checkpoint_files.hpp"
#include "io/checkpoint/checkpoint_shards.hpp"
#include "io/checkpoint/checkpoint_write_steps.hpp"
#include "io/checkpoint/phase_timer.hpp"
#include "io/hdf5/h5_util.hpp"
#include "io/hdf5/hdf5_lock.hpp"
#include "kernels/runtime/device_memory.hpp"
#include "src/base/errors.hpp"

// The file holds IEEE float32 little-endian; the thread writes host floats as they are.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "asynchronous checkpoints write native floats");

namespace zeropp {
using namespace ckpt;
using namespace h5;

namespace {

// Writes all n bytes at `offset` (pwrite may write fewer); errno on failure.
bool pwrite_all(int fd, const char* p, size_t n, off_t offset) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, offset);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
    offset += w;
  }
  return true;
}

}  // namespace

AsyncCheckpointWriter::~AsyncCheckpointWriter() { join_thread(); }

void AsyncCheckpointWriter::join_thread() {
  if (thread_.joinable()) thread_.join();
}

void AsyncCheckpointWriter::launch(void (AsyncCheckpointWriter::*work)()) {
  join_thread();
  error_.reset();
  done_ = false;
  thread_ = std::thread([this, work] {
    try {
      (this->*work)();
    } catch (const std::exception& e) {
      if (!error_) error_ = e.what();
    }
    done_ = true;
  });
}

int64_t AsyncCheckpointWriter::snapshot_bytes() const {
  int64_t n = 0;
  for (const Part& p : parts_) n += int64_t(p.host.size() * sizeof(float));
  return n;
}

void AsyncCheckpointWriter::start(const std::string& dir, const std::string& name, const ShardGroups& groups,
                                  const CheckpointMeta& meta, int keep, Refusal refuse) {
  if (in_flight())
    fatal("AsyncCheckpointWriter::start", __FILE__, __LINE__, "the save of " + name_ + " is still in flight");
  const int rank = comm_rank(comm_);
  PhaseTimer timer("checkpoint start (asynchronous)", rank);
  check_before_write(comm_, dir, name, groups, meta, true);
  timer.mark("checks");

  // The snapshot, into buffers kept from the previous save (no new pages
  // to fault in when the sizes have not changed).
  snapshot_ = groups;
  size_t n_parts = 0;
  for (const auto& gs : groups) n_parts += gs.second.size();
  parts_.resize(n_parts);
  size_t k = 0;
  for (auto& [g, shards] : snapshot_)
    for (TensorShard& s : shards) {
      Part& p = parts_[k++];
      p.host.resize(size_t(s.end - s.begin));
      if (!p.host.empty()) copy_to_host(CVec<float>(s.data, int64_t(p.host.size())), p.host.data());
      s.data = p.host.data();
    }
  timer.mark("snapshot");

  rank_ = rank;
  dir_ = dir;
  name_ = name;
  meta_ = meta;
  keep_ = keep;
  refuse_ = std::move(refuse);
  starts_.assign(n_parts, 0);
  sums_.assign(n_parts, 0);
  error_.reset();
  phase_ = Phase::kCreating;
  if (rank == 0) launch(&AsyncCheckpointWriter::create_file);
}

void AsyncCheckpointWriter::create_file() {
  LibraryLock lock;
  QuietHdf5 quiet;
  H5Id fapl = serial_fapl();
  H5Id file = create_checkpoint_file(join(dir_, tmp_name(name_)), meta_, fapl.get(), H5P_DEFAULT, 0);
  size_t k = 0;
  for (const auto& [g, shards] : snapshot_)
    for (const TensorShard& s : shards) {
      H5Id d = tensor_dataset(file.get(), g, s);
      if (numel_of(s.shape) == 0) {
        ++k;
        continue;
      }
      const haddr_t at = H5Dget_offset(d.get());
      if (at == HADDR_UNDEF) throw Error(name_ + ": /" + g + "/" + s.name + " has no storage in the file");
      starts_[k++] = int64_t(at);
    }
  file.close_checked("H5Fclose(checkpoint)", __FILE__, __LINE__);
}

void AsyncCheckpointWriter::write_parts() {
  const std::string tmp_path = join(dir_, tmp_name(name_));
  const int rank = rank_;
  const int fd = ::open(tmp_path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) error_ = tmp_path + ": cannot open for writing: " + std::strerror(errno);
  int written = 0;
  maybe_fault(rank, CheckpointFault::kAfterDatasets, written);
  size_t k = 0;
  for (const auto& [g, shards] : snapshot_)
    for (const TensorShard& s : shards) {
      const Part& p = parts_[k];
      if (!error_ && !p.host.empty()) {
        if (!pwrite_all(fd, reinterpret_cast<const char*>(p.host.data()), p.host.size() * sizeof(float),
                        off_t(p.file_offset)))
          error_ = tmp_path + ": cannot write /" + g + "/" + s.name + ": " + std::strerror(errno);
        sums_[k] = checksum_part(p.host.data(), s.begin, int64_t(p.host.size()));
      }
      ++k;
      maybe_fault(rank, CheckpointFault::kAfterDatasets, ++written);
    }
  if (fd >= 0) {
    if (!error_ && ::fsync(fd) != 0) error_ = tmp_path + ": cannot fsync: " + std::strerror(errno);
    if (::close(fd) != 0 && !error_) error_ = tmp_path + ": cannot close: " + std::strerror(errno);
  }
  if (!error_ && refuse_) error_ = refuse_(snapshot_);
}

void AsyncCheckpointWriter::commit_file() {
  PhaseTimer timer("checkpoint commit (asynchronous, rank 0's thread)", 0);
  {
    LibraryLock lock;
    QuietHdf5 quiet;
    H5Id fapl = serial_fapl();
    const std::string tmp_path = join(dir_, tmp_name(name_));
    H5Id file(ZCHECK_H5(H5Fopen(tmp_path.c_str(), H5F_ACC_RDWR, fapl.get())), H5Fclose);
    std::vector<H5Id> datasets;
    for (const auto& [g, shards] : snapshot_)
      for (const TensorShard& s : shards) {
        const std::string path = "/" + g + "/" + s.name;
        datasets.emplace_back(ZCHECK_H5(H5Dopen2(file.get(), path.c_str(), H5P_DEFAULT)), H5Dclose);
      }
    write_checksums_and_close(file, datasets, sums_);
  }
  timer.mark("attributes+close");
  maybe_fault(0, CheckpointFault::kBeforeRename);
  error_ = fsync_temporary(dir_, name_);
  timer.mark("fsync");
  if (!error_) error_ = rename_into_place(dir_, name_, keep_, true, timer);
}

void AsyncCheckpointWriter::fail() {
  phase_ = Phase::kIdle;
  if (rank_ == 0) ::unlink(join(dir_, tmp_name(name_)).c_str());
}

bool AsyncCheckpointWriter::step(bool wait) {
  if (!in_flight()) return true;
  if (wait) join_thread();
  int done = done_ ? 1 : 0;
  ZCHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &done, 1, MPI_INT, MPI_MIN, comm_));
  if (!done) return false;
  join_thread();
  try {
    agree_on_error(comm_, error_);
  } catch (const Error&) {
    fail();
    throw;
  }
  switch (phase_) {
    case Phase::kCreating: {
      ZCHECK_MPI(MPI_Bcast(starts_.data(), int(starts_.size()), MPI_INT64_T, 0, comm_));
      size_t k = 0;
      for (const auto& [g, shards] : snapshot_)
        for (const TensorShard& s : shards) {
          parts_[k].file_offset = starts_[k] + s.begin * int64_t(sizeof(float));
          ++k;
        }
      phase_ = Phase::kWriting;
      launch(&AsyncCheckpointWriter::write_parts);
      return false;
    }
    case Phase::kWriting:
      // Before the reduction: rank 0 cannot complete it, nor rename, without this rank.
      if (rank_ != 0) maybe_fault(rank_, CheckpointFault::kBeforeRename);
      ZCHECK_MPI(MPI_Reduce(rank_ == 0 ? MPI_IN_PLACE : sums_.data(), sums_.data(), int(sums_.size()),
                            MPI_UINT64_T, MPI_SUM, 0, comm_));
      phase_ = Phase::kCommitting;
      if (rank_ == 0) launch(&AsyncCheckpointWriter::commit_file);
      return false;
    case Phase::kCommitting:
    case Phase::kIdle:
      break;
  }
  phase_ = Phase::kIdle;
  return true;
}

bool AsyncCheckpointWriter::advance() { return step(false); }

void AsyncCheckpointWriter::finish() {
  while (!step(true)) {
  }
}

}  // namespace zeropp
